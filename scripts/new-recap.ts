// `npm run new-recap`: the curator's weekly command. Creates content/recaps/<date>.ts for the
// week after the newest one (or --date YYYY-MM-DD), with ten empty entries that fail validation
// until they are filled in, and refreshes the registry that content/index.ts imports.
//   npm run new-recap                      next week (newest + 7 days; when that is already past,
//                                          the first Monday after today)
//   npm run new-recap -- --date 2026-02-02 a given week (a gap other than 7 days is written into the file)
//   npm run new-recap -- --today 2026-11-28 as if today were that date (what it would scaffold then)
//   npm run new-recap -- --registry-only   only refresh content/recaps/index.ts
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { addDays, daysBetween, isIsoDate, parseIsoDate, recapPathFor, toIsoDate } from '../content/dates.ts';
import { whenOf, type Schedule } from '../jobs/digest/when.ts';
import { listWeekFiles, RECAPS_DIR, writeRegistry } from './recap-registry.ts';

/** `gap`: days since the newest existing week, written into the file when it is not the usual 7. */
export function scaffoldRecap(date: string, gap?: number): string {
  const gapLine =
    gap !== undefined && gap !== 7 ? `  // ${gap} days after the previous week, not the usual 7: the weeks in between were skipped.\n  daysAfterPrevious: ${gap},\n` : '';
  const entry = (rank: number) => `    { rank: ${rank}, name: '', url: '', tagline: '', upvotes: 0, note: '' },`;
  return `import { defineRecap } from '../define.ts';

// Fill in every field, then run \`npm run validate-content\`. Entries go from most to least upvoted;
// url is the product's page on the launch platform (https://launched.lovable.app/…).
export default defineRecap({
  date: '${date}',
  path: '${recapPathFor(date)}',
${gapLine}  headline: '',
  title: '',
  intro: '',
  entries: [
${Array.from({ length: 10 }, (_, i) => entry(i + 1)).join('\n')}
  ],
  layout: { supportBanner: true, ending: 'call-to-action', backLink: false, upvotes: 'after-tagline' },
});
`;
}

/** The first Monday strictly after `today` (both ISO dates). */
export function mondayAfter(today: string): string {
  const weekday = parseIsoDate(today).getUTCDay();
  return addDays(today, (8 - weekday) % 7 || 7);
}

/**
 * The week new-recap scaffolds without --date: a week after the newest one, keeping its weekday,
 * unless that is already past; a week dated in the past would be public the moment it is written,
 * so after a pause the curator starts again from the next Monday.
 */
export function nextWeekDate(newest: string | undefined, today: string): string {
  const following = newest ? addDays(newest, 7) : undefined;
  return following && following >= today ? following : mondayAfter(today);
}

export async function createNextRecap(options: { date?: string; dir?: string; today?: string } = {}): Promise<{ file: string; date: string; newest?: string }> {
  const dir = options.dir ?? RECAPS_DIR;
  const existing = await listWeekFiles(dir);
  const newest = existing.at(-1)?.slice(0, 10);
  const today = options.today ?? toIsoDate(new Date());
  const date = options.date ?? nextWeekDate(newest, today);
  if (!isIsoDate(date)) throw new Error(`Give the week's date as --date YYYY-MM-DD ("${date}" is not one).`);
  const file = join(dir, `${date}.ts`);
  if (existsSync(file)) throw new Error(`${file} already exists.`);
  // A week after the newest one may follow a pause; one dated earlier fills a hole and needs no note.
  const gap = newest && date > newest ? daysBetween(newest, date) : undefined;
  await writeFile(file, scaffoldRecap(date, gap));
  await writeRegistry(dir);
  return { file, date, newest };
}

/** What new-recap says about when a week will be public and e-mailed (DIGEST_CRON, DIGEST_TZ). */
export function whenLines(date: string, schedule: Schedule): string[] {
  const when = whenOf({ date }, schedule, { year: true });
  return [`It will be ${when.line}.`, ...(when.warning ? [`warning: ${when.warning}`] : [])];
}

/** Reads DIGEST_CRON and DIGEST_TZ (.env included) as the server does, and says when. */
async function sayWhen(date: string) {
  const [{ ConfigError, parseConfig }, { readDotEnv }] = await Promise.all([import('../server/config.ts'), import('../server/startup.ts')]);
  readDotEnv();
  try {
    // The unsubscribe secret is not needed here; no development secret is written for it.
    const config = await parseConfig(process.env, async () => 'new-recap-secret-never-used');
    for (const line of whenLines(date, config.digest)) (line.startsWith('warning:') ? console.warn : console.log)(line);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.warn(`When it will be public cannot be said until the environment is fixed:\n${error.problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

async function main() {
  let args;
  try {
    args = parseArgs({ options: { date: { type: 'string' }, today: { type: 'string' }, 'registry-only': { type: 'boolean' } } }).values;
    if (args.today !== undefined && !isIsoDate(args.today)) throw new Error(`--today "${args.today}" is not a date in YYYY-MM-DD form.`);
  } catch (error) {
    console.error(`${(error as Error).message}\nUsage: npm run new-recap [-- --date YYYY-MM-DD | --today YYYY-MM-DD | --registry-only]`);
    process.exit(2);
  }
  if (args['registry-only']) {
    const files = await writeRegistry();
    console.log(`content/recaps/index.ts lists ${files.length} weeks.`);
    return;
  }
  try {
    const { file, date, newest } = await createNextRecap({ date: args.date, today: args.today });
    if (!args.date && newest && date !== addDays(newest, 7)) {
      console.log(`The newest week, ${newest}, is past; the next one starts from the first Monday after today.`);
    }
    console.log(`Created ${file} for the week of ${date} (${recapPathFor(date)}).`);
    await sayWhen(date);
    console.log('Fill in the headline, title, intro and ten entries, then run: npm run validate-content');
    console.log(`Before it is public: npm run preview -- ${date} prints a link that shows it on the site.`);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
