import { cp, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmRun } from '../tests/support/cli.ts';
import { createNextRecap, mondayAfter, nextWeekDate } from './new-recap.ts';
import { listWeekFiles, RECAPS_DIR } from './recap-registry.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// The real tree's newest week is months before this day, as the curator finds it after a pause.
const TODAY = '2026-11-28';

describe('the week new-recap picks without --date', () => {
  it('is the first Monday strictly after today', () => {
    expect(mondayAfter('2026-11-28')).toBe('2026-11-30'); // a Saturday
    expect(mondayAfter('2026-11-29')).toBe('2026-11-30'); // a Sunday
    expect(mondayAfter('2026-11-30')).toBe('2026-12-07'); // a Monday: the next one
    expect(mondayAfter('2026-12-29')).toBe('2027-01-04'); // across the year
  });

  it('keeps the weekly rhythm while the week after the newest is still ahead, and starts from today after a pause', () => {
    expect(nextWeekDate('2026-11-23', TODAY)).toBe('2026-11-30');
    expect(nextWeekDate('2026-11-22', TODAY)).toBe('2026-11-29'); // a Sunday rhythm stays a Sunday rhythm
    expect(nextWeekDate('2026-12-07', TODAY)).toBe('2026-12-14'); // weeks written ahead
    expect(nextWeekDate('2025-07-14', TODAY)).toBe('2026-11-30'); // not 2025-07-21, public at once
    expect(nextWeekDate('2026-11-16', TODAY)).toBe('2026-11-30'); // not 2026-11-23, already past
    expect(nextWeekDate(undefined, TODAY)).toBe('2026-11-30');
  });
});

describe('npm run new-recap on a copy of the content', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'new-recap-'));
    const skipped = new Set(['node_modules', '.git', 'dist', 'data', '.tmp', '.env']);
    await cp(ROOT, root, { recursive: true, filter: (source) => !skipped.has(source.slice(ROOT.length).split('/')[0]!) });
    await symlink(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('scaffolds the next Monday after today when the newest week is months old, printing every date with its year', async () => {
    const newest = (await listWeekFiles(join(root, 'content/recaps'))).at(-1)!.slice(0, 10);
    expect(newest < '2026-01-01').toBe(true);
    const result = await npmRun('new-recap', ['--today', TODAY], { DIGEST_CRON: '0 9 * * 1', DIGEST_TZ: 'UTC' }, root);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('for the week of 2026-11-30 (/weekly-recap-november-30-2026)');
    expect(result.stdout).toContain('It will be public Mon 30 Nov 2026 09:00 UTC, e-mail 09:00 UTC.');
    expect(result.stdout).toContain(`The newest week, ${newest}, is past`);
    // Every day-and-month it prints names its year.
    const monthsWithoutYear = result.stdout.match(/\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b(?! \d{4})/g);
    expect(monthsWithoutYear).toBeNull();
    const registry = await readFile(join(root, 'content/recaps/index.ts'), 'utf8');
    expect(registry).toContain("'2026-11-30.ts'");
  });

  it('with --date scaffolds exactly that week, as before', async () => {
    const result = await npmRun('new-recap', ['--date', '2026-12-14', '--today', TODAY], { DIGEST_CRON: '0 9 * * 1', DIGEST_TZ: 'UTC' }, root);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('for the week of 2026-12-14');
    expect(await readdir(join(root, 'content/recaps'))).toContain('2026-12-14.ts');
  });
});

describe('createNextRecap', () => {
  it('writes the chosen week into the folder it is given, and refuses a week that exists', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recaps-'));
    try {
      for (const file of await listWeekFiles(RECAPS_DIR)) await cp(join(RECAPS_DIR, file), join(dir, file));
      const { date } = await createNextRecap({ dir, today: TODAY });
      expect(date).toBe('2026-11-30');
      expect(await readFile(join(dir, '2026-11-30.ts'), 'utf8')).toContain("date: '2026-11-30'");
      await expect(createNextRecap({ dir, date: '2026-11-30', today: TODAY })).rejects.toThrow(/already exists/);
      await expect(createNextRecap({ dir, date: '2026-02-30', today: TODAY })).rejects.toThrow(/--date YYYY-MM-DD/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
