import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createNextRecap } from '../scripts/new-recap.ts';
import { listWeekFiles, renderRegistry } from '../scripts/recap-registry.ts';
import { compareIsoDates, daysBetween, formatShortDate, formatWeekDate, recapPathFor } from './dates.ts';
import { SEED_HEADLINES, SEED_WEEKS } from './history.ts';
import { findRecap, latestRecaps, neighboursOf, recapByPath, recaps, recapSummaries } from './index.ts';
import { recapFiles } from './recaps/index.ts';
import type { Recap } from './schema.ts';
import { groupDigits } from './text.ts';
import { validateRecaps, type RecapFile } from './validate.ts';

const clone = <T>(value: T): T => structuredClone(value);

/** The real recap files with one of them changed by `mutate`. */
function withChange(date: string, mutate: (recap: Recap) => void): RecapFile[] {
  return recapFiles.map((file) => {
    if (file.file !== `${date}.ts`) return file;
    const recap = clone(file.recap) as Recap;
    mutate(recap);
    return { file: file.file, recap };
  });
}

function errorsOf(files: RecapFile[]): string[] {
  const result = validateRecaps(files);
  return result.ok ? [] : result.errors;
}

describe('the 24 published weeks', () => {
  it('all exist and pass validation', () => {
    expect(validateRecaps(recapFiles)).toMatchObject({ ok: true });
    expect(recaps.map((r) => r.date).sort()).toEqual([...SEED_WEEKS]);
  });

  it('use the spec’s routes and headlines', () => {
    expect(recaps.map((r) => r.path)).toContain('/weekly-recap-june-9');
    expect(recaps.map((r) => r.path)).toContain('/weekly-recap-july-14');
    for (const [date, headline] of Object.entries(SEED_HEADLINES)) expect(findRecap(date)?.headline).toBe(headline);
    expect(findRecap('2025-07-14')?.headline).toBe(findRecap('2025-07-06')?.headline);
  });

  it('hold the spec’s upvote facts: a week reaching 914, a three-way tie at 133, May 11 from 46 to 3', () => {
    const all = recaps.flatMap((r) => r.entries.map((e) => e.upvotes));
    expect(Math.max(...all)).toBe(914);
    expect(Math.min(...all)).toBe(2);
    expect(recaps.some((r) => r.entries.filter((e) => e.upvotes === 133).length === 3)).toBe(true);
    const may11 = findRecap('2025-05-11')!;
    expect([may11.entries[0]!.upvotes, may11.entries[9]!.upvotes]).toEqual([46, 3]);
  });

  it('are listed in the registry exactly as the folder holds them', async () => {
    const files = await listWeekFiles();
    expect(recapFiles.map((f) => f.file)).toEqual(files);
    expect(await readFile(new URL('./recaps/index.ts', import.meta.url), 'utf8')).toBe(renderRegistry(files));
  });
});

describe('validation rejects one broken rule at a time, naming the file and the field', () => {
  const cases: [string, RecapFile[], RegExp][] = [
    [
      'unsorted upvotes',
      withChange('2025-03-02', (r) => {
        r.entries[4]!.upvotes = r.entries[3]!.upvotes + 1;
      }),
      /content\/recaps\/2025-03-02\.ts: entries\[4\]\.upvotes: #5 has \d+ upvotes, more than #4/,
    ],
    ['nine entries', withChange('2025-03-02', (r) => void r.entries.pop()), /2025-03-02\.ts: entries: a recap has exactly 10 entries/],
    [
      'ranks out of order',
      withChange('2025-03-02', (r) => {
        r.entries[2]!.rank = 7;
      }),
      /2025-03-02\.ts: entries\[2\]\.rank: entry 3 has rank 7/,
    ],
    [
      'a wrong gap between weeks',
      recapFiles.filter((f) => f.file !== '2025-03-09.ts'),
      /2025-03-16\.ts: date: 2025-03-16 is 14 days after the previous week \(2025-03-02\); weeks are 7 days apart/,
    ],
    [
      'a link off the launch platform',
      withChange('2025-03-02', (r) => {
        r.entries[0]!.url = 'http://example.com/product';
      }),
      /2025-03-02\.ts: entries\[0\]\.url: must be an absolute https URL of a product page on launched\.lovable\.app/,
    ],
    [
      'a bare placeholder link',
      withChange('2025-02-02', (r) => {
        r.entries[1]!.url = '#';
      }),
      /2025-02-02\.ts: entries\[1\]\.url: must be an absolute https URL/,
    ],
    [
      'an empty editor’s note',
      withChange('2025-03-02', (r) => {
        r.entries[6]!.note = '   ';
      }),
      /2025-03-02\.ts: entries\[6\]\.note: editor's note must not be empty/,
    ],
    [
      'placeholder text',
      withChange('2025-03-02', (r) => {
        r.intro = 'Lorem ipsum dolor sit amet.';
      }),
      /2025-03-02\.ts: intro: intro still holds placeholder text/,
    ],
    [
      'a duplicate path',
      [...recapFiles, { file: 'copy.ts', recap: clone(recapFiles[5]!.recap) }],
      /copy\.ts: path: "\/weekly-recap-[a-z]+-\d+" is already used by 2025-/,
    ],
    [
      'a path that does not match the date',
      withChange('2025-03-02', (r) => {
        r.path = '/weekly-recap-march-3';
      }),
      /2025-03-02\.ts: path: path must be "\/weekly-recap-march-2" for date 2025-03-02/,
    ],
    [
      'a headline that differs from the spec',
      withChange('2025-04-13', (r) => {
        r.headline = 'Productivity Tools Rule';
      }),
      /2025-04-13\.ts: headline: must read "Productivity Tools Rule the Week"/,
    ],
    [
      'a week outside its upvote range',
      withChange('2025-06-09', (r) => {
        r.entries[9]!.upvotes = 3;
      }),
      /2025-06-09\.ts: entries\[9\]\.upvotes: #10 must have 2 upvotes, not 3/,
    ],
    [
      'May 4’s tail range',
      withChange('2025-05-04', (r) => {
        r.entries[3]!.upvotes = 15;
      }),
      /2025-05-04\.ts: entries\[3\]\.upvotes: #4 must have 14 upvotes, not 15/,
    ],
    ['a missing week', recapFiles.filter((f) => f.file !== '2025-07-14.ts'), /2025-07-14\.ts: the week of 2025-07-14 is missing/],
    [
      'a negative upvote count',
      withChange('2025-03-02', (r) => {
        r.entries[9]!.upvotes = -1;
      }),
      /2025-03-02\.ts: entries\[9\]\.upvotes: upvotes must not be negative/,
    ],
  ];

  it.each(cases)('%s', (_name, files, message) => {
    const errors = errorsOf(files);
    expect(errors.some((error) => message.test(error)), `expected ${message} in:\n${errors.join('\n')}`).toBe(true);
  });
});

describe('derived views', () => {
  it('list every recap newest first, with the 3 newest for the home page', () => {
    expect(recapSummaries).toHaveLength(24);
    expect(recapSummaries[0]!.date).toBe('2025-07-14');
    expect(recapSummaries.at(-1)!.date).toBe('2025-02-02');
    expect(latestRecaps.map((r) => r.date)).toEqual(['2025-07-14', '2025-07-06', '2025-06-30']);
  });

  it('find a recap by path, date or bare slug, and its neighbours', () => {
    expect(recapByPath('/weekly-recap-june-9')?.date).toBe('2025-06-09');
    expect(findRecap('weekly-recap-june-9')?.date).toBe('2025-06-09');
    expect(findRecap('2025-06-09')?.path).toBe('/weekly-recap-june-9');
    expect(recapByPath('/weekly-recap-june-8')).toBeUndefined();
    const { previous, next } = neighboursOf('/weekly-recap-june-9');
    expect(previous?.date).toBe('2025-06-01');
    expect(next?.date).toBe('2025-06-16');
    expect(neighboursOf('/weekly-recap-july-14').next).toBeUndefined();
    expect(neighboursOf('/weekly-recap-february-2').previous).toBeUndefined();
  });

  it('derive routes and labels from dates', () => {
    expect(recapPathFor('2025-02-02')).toBe('/weekly-recap-february-2');
    // From 2026 on the year is part of the address, so February 2 of two years are two pages.
    expect(recapPathFor('2026-02-02')).toBe('/weekly-recap-february-2-2026');
    expect(recapPathFor('2035-12-31')).toBe('/weekly-recap-december-31-2035');
    expect(recapPathFor('2024-12-30')).toBe('/weekly-recap-december-30-2024');
    expect(formatWeekDate('2025-07-14')).toBe('July 14, 2025');
    expect(daysBetween('2025-06-01', '2025-06-09')).toBe(8);
  });
});

// The labels are written by hand so the server never loads ICU (content/dates.ts); Intl is the
// judge here, on every day of three years and on counts of every size.
describe('dates and counts written without Intl', () => {
  const days = Array.from({ length: 3 * 366 }, (_, i) => new Date(Date.UTC(2025, 0, 1 + i)).toISOString().slice(0, 10));

  it('labels every day as toLocaleDateString does in en-US', () => {
    for (const iso of days) {
      const date = new Date(`${iso}T00:00:00Z`);
      expect(formatWeekDate(iso)).toBe(date.toLocaleDateString('en-US', { month: 'long', day: 'numeric', year: 'numeric', timeZone: 'UTC' }));
      expect(formatShortDate(iso)).toBe(date.toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' }));
    }
  });

  it('orders ISO dates as localeCompare does', () => {
    const shuffled = [...days].sort((a, b) => (a.slice(8) + a).localeCompare(b.slice(8) + b));
    expect([...shuffled].sort(compareIsoDates)).toEqual([...shuffled].sort((a, b) => a.localeCompare(b)));
    expect(compareIsoDates('2026-01-05', '2026-01-05')).toBe(0);
  });

  it('groups digits as toLocaleString does in en-US', () => {
    for (const n of [0, 7, 42, 999, 1000, 1204, 99_999, 100_000, 1_234_567, 1_000_000_000, -1, -1234, -1_234_567, 12.5, 1234.75]) {
      expect(groupDigits(n)).toBe(n.toLocaleString('en-US'));
    }
  });
});

describe('npm run new-recap', () => {
  const dirs: string[] = [];
  afterAll(async () => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

  it('scaffolds next week, which fails validation until filled in and passes once it is', async () => {
    const root = await mkdtemp(join(tmpdir(), 'new-recap-'));
    dirs.push(root);
    const dir = join(root, 'content', 'recaps');
    await mkdir(dir, { recursive: true });
    await cp(new URL('./define.ts', import.meta.url), join(root, 'content', 'define.ts'));
    for (const { file } of recapFiles) await cp(new URL(`./recaps/${file}`, import.meta.url), join(dir, file));

    // Two days after the newest week, the next one is a week after it (scripts/new-recap.test.ts tries a newest week long past).
    const { file, date } = await createNextRecap({ dir, today: '2025-07-16' });
    expect(date).toBe('2025-07-21');
    const registry = await readFile(join(dir, 'index.ts'), 'utf8');
    expect(registry).toContain("{ file: '2025-07-21.ts', recap: week_2025_07_21 }");

    const load = async (suffix: string) => (await import(`${pathToFileURL(file).href}?${suffix}`)).default as Recap;
    const scaffolded = await load('empty');
    expect(scaffolded.path).toBe('/weekly-recap-july-21');
    const emptyErrors = errorsOf([...recapFiles, { file: '2025-07-21.ts', recap: scaffolded }]);
    expect(emptyErrors.length).toBeGreaterThanOrEqual(40);
    expect(emptyErrors).toContain('content/recaps/2025-07-21.ts: headline: headline must not be empty');
    expect(emptyErrors).toContain("content/recaps/2025-07-21.ts: entries[0].note: editor's note must not be empty");

    // The curator fills every field in.
    let source = await readFile(file, 'utf8');
    source = source
      .replace("headline: ''", "headline: 'Small Tools With Big Opinions'")
      .replace("title: ''", "title: 'Ten Apps That Know What They Want'")
      .replace("intro: ''", "intro: 'A week of tools that pick one job and do it properly.'");
    for (let rank = 1; rank <= 10; rank++) {
      source = source.replace(
        `{ rank: ${rank}, name: '', url: '', tagline: '', upvotes: 0, note: '' }`,
        `{ rank: ${rank}, name: 'Filled ${rank}', url: 'https://launched.lovable.app/products/filled-${rank}', tagline: 'Does one thing well.', upvotes: ${100 - rank}, note: 'Worth a look for the focus alone.' }`,
      );
    }
    await writeFile(file, source);
    const filled = await load('filled');
    expect(errorsOf([...recapFiles, { file: '2025-07-21.ts', recap: filled }])).toEqual([]);
  });

  it('scaffolds a week after a pause (2026-02-02): the year in its path, the gap in its file, valid once filled in', async () => {
    const root = await mkdtemp(join(tmpdir(), 'new-recap-'));
    dirs.push(root);
    const dir = join(root, 'content', 'recaps');
    await mkdir(dir, { recursive: true });
    await cp(new URL('./define.ts', import.meta.url), join(root, 'content', 'define.ts'));
    for (const { file } of recapFiles) await cp(new URL(`./recaps/${file}`, import.meta.url), join(dir, file));

    const { file } = await createNextRecap({ dir, date: '2026-02-02' });
    let source = await readFile(file, 'utf8');
    expect(source).toContain("path: '/weekly-recap-february-2-2026'");
    expect(source).toContain('daysAfterPrevious: 203');
    source = source
      .replace("headline: ''", "headline: 'Back After the Winter'")
      .replace("title: ''", "title: 'Ten Launches to Restart the Year'")
      .replace("intro: ''", "intro: 'The first recap after a long pause.'");
    for (let rank = 1; rank <= 10; rank++) {
      source = source.replace(
        `{ rank: ${rank}, name: '', url: '', tagline: '', upvotes: 0, note: '' }`,
        `{ rank: ${rank}, name: 'Winter ${rank}', url: 'https://launched.lovable.app/products/winter-${rank}', tagline: 'Made in the cold.', upvotes: ${50 - rank}, note: 'Simple and sound.' }`,
      );
    }
    await writeFile(file, source);
    const filled = (await import(pathToFileURL(file).href)).default as Recap;
    expect(errorsOf([...recapFiles, { file: '2026-02-02.ts', recap: filled }])).toEqual([]);
    // The same week under the 2025 rule, or with a wrong gap, is refused.
    expect(errorsOf([...recapFiles, { file: '2026-02-02.ts', recap: { ...filled, path: '/weekly-recap-february-2' } }])).toContain(
      'content/recaps/2026-02-02.ts: path: path must be "/weekly-recap-february-2-2026" for date 2026-02-02',
    );
    expect(errorsOf([...recapFiles, { file: '2026-02-02.ts', recap: { ...filled, daysAfterPrevious: 7 } }])).toContain(
      'content/recaps/2026-02-02.ts: daysAfterPrevious: the previous week is 2025-07-14, 203 days earlier, not 7',
    );
    const { daysAfterPrevious: _gap, ...undeclared } = filled;
    expect(errorsOf([...recapFiles, { file: '2026-02-02.ts', recap: undeclared }]).join('\n')).toMatch(/203 days after the previous week \(2025-07-14\).*declare daysAfterPrevious: 203/);
  });

  it('refuses a date that is not a date, and an existing week', async () => {
    const root = await mkdtemp(join(tmpdir(), 'new-recap-'));
    dirs.push(root);
    await expect(createNextRecap({ dir: root, date: '2025-02-30' })).rejects.toThrow(/is not one/);
    await writeFile(join(root, '2025-08-04.ts'), '');
    await expect(createNextRecap({ dir: root, date: '2025-08-04' })).rejects.toThrow(/already exists/);
  });
});
