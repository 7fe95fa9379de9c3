// Checks a set of recap files against the schema and the rules that span weeks. Pure: it receives
// the modules' values and returns messages, each naming the file and the field at fault.
import { compareIsoDates, daysBetween } from './dates.ts';
import { IRREGULAR_GAPS, SEED_HEADLINES, SEED_UPVOTE_BOUNDS, SEED_UPVOTE_RANGES, SEED_WEEKS } from './history.ts';
import { recapSchema, type Recap } from './schema.ts';

export interface RecapFile {
  /** File name inside content/recaps, used in messages. */
  file: string;
  /** The file's default export, unchecked. */
  recap: unknown;
}

/** What importing the recaps throws when any of them is invalid: every problem, one per line. */
export class ContentError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`The recaps in content/recaps are not valid:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ContentError';
  }
}

export type ValidationResult = { ok: true; recaps: Recap[] } | { ok: false; errors: string[] };

function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, key) => (typeof key === 'number' ? `${out}[${key}]` : out ? `${out}.${String(key)}` : String(key)), '');
}

export function validateRecaps(files: readonly RecapFile[]): ValidationResult {
  const errors: string[] = [];
  const valid: { file: string; recap: Recap }[] = [];

  for (const { file, recap } of files) {
    const parsed = recapSchema.safeParse(recap);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        errors.push(`content/recaps/${file}: ${fieldPath(issue.path) || '(recap)'}: ${issue.message}`);
      }
      continue;
    }
    const expectedFile = `${parsed.data.date}.ts`;
    if (file !== expectedFile) {
      errors.push(`content/recaps/${file}: date: the recap is dated ${parsed.data.date}, so the file must be named ${expectedFile}`);
    }
    valid.push({ file, recap: parsed.data });
  }

  const byPath = new Map<string, string>();
  for (const { file, recap } of valid) {
    const other = byPath.get(recap.path);
    if (other) errors.push(`content/recaps/${file}: path: "${recap.path}" is already used by ${other}`);
    else byPath.set(recap.path, file);
  }

  const oldestFirst = [...valid].sort((a, b) => compareIsoDates(a.recap.date, b.recap.date));
  for (let i = 1; i < oldestFirst.length; i++) {
    const earlier = oldestFirst[i - 1]!;
    const later = oldestFirst[i]!;
    const gap = daysBetween(earlier.recap.date, later.recap.date);
    const declared = later.recap.daysAfterPrevious;
    const expected = declared ?? IRREGULAR_GAPS[later.recap.date] ?? 7;
    if (gap !== expected && gap !== 0) {
      errors.push(
        declared === undefined
          ? `content/recaps/${later.file}: date: ${later.recap.date} is ${gap} days after the previous week (${earlier.recap.date}); weeks are ${expected} days apart (after skipped weeks, declare daysAfterPrevious: ${gap} in the file)`
          : `content/recaps/${later.file}: daysAfterPrevious: the previous week is ${earlier.recap.date}, ${gap} days earlier, not ${declared}`,
      );
    }
  }

  errors.push(...checkSeedHistory(valid));
  return errors.length > 0 ? { ok: false, errors } : { ok: true, recaps: valid.map((v) => v.recap) };
}

function checkSeedHistory(valid: readonly { file: string; recap: Recap }[]): string[] {
  const errors: string[] = [];
  const dates = new Set(valid.map((v) => v.recap.date));
  for (const week of SEED_WEEKS) {
    if (!dates.has(week)) errors.push(`content/recaps/${week}.ts: the week of ${week} is missing`);
  }

  const seedRecaps = valid.filter((v) => (SEED_WEEKS as readonly string[]).includes(v.recap.date));
  for (const { file, recap } of seedRecaps) {
    const where = `content/recaps/${file}`;
    const headline = SEED_HEADLINES[recap.date];
    if (headline !== undefined && recap.headline !== headline) {
      errors.push(`${where}: headline: must read "${headline}"`);
    }
    const range = SEED_UPVOTE_RANGES[recap.date];
    if (range) {
      const first = recap.entries[range.fromRank - 1]!;
      const last = recap.entries[9]!;
      if (first.upvotes !== range.highest) {
        errors.push(`${where}: entries[${range.fromRank - 1}].upvotes: #${range.fromRank} must have ${range.highest} upvotes, not ${first.upvotes}`);
      }
      if (last.upvotes !== range.lowest) {
        errors.push(`${where}: entries[9].upvotes: #10 must have ${range.lowest} upvotes, not ${last.upvotes}`);
      }
    }
    recap.entries.forEach((entry, index) => {
      if (entry.upvotes < SEED_UPVOTE_BOUNDS.lowest || entry.upvotes > SEED_UPVOTE_BOUNDS.highest) {
        errors.push(
          `${where}: entries[${index}].upvotes: ${entry.upvotes} is outside ${SEED_UPVOTE_BOUNDS.lowest}–${SEED_UPVOTE_BOUNDS.highest}, the range of the published weeks`,
        );
      }
    });
  }

  if (seedRecaps.length === SEED_WEEKS.length) {
    const all = seedRecaps.flatMap((v) => v.recap.entries.map((e) => e.upvotes));
    if (Math.max(...all) !== SEED_UPVOTE_BOUNDS.highest) {
      errors.push(`content/recaps: upvotes: some published week must reach ${SEED_UPVOTE_BOUNDS.highest} upvotes (the highest is ${Math.max(...all)})`);
    }
    if (Math.min(...all) !== SEED_UPVOTE_BOUNDS.lowest) {
      errors.push(`content/recaps: upvotes: some published week must go down to ${SEED_UPVOTE_BOUNDS.lowest} upvotes (the lowest is ${Math.min(...all)})`);
    }
  }
  return errors;
}
