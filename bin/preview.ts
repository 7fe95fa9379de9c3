// `npm run preview -- WEEK`: prints a signed link that shows a coming week on the site (its page as
// it will be, and its e-mail), for 7 days, before it is public. Run it where the site's
// UNSUBSCRIBE_SECRET and SITE_URL are set (the container), or the link will not open there.
// Exit 0 with the link, 1 when the configuration is wrong, 2 for bad arguments.
import { parseArgs } from 'node:util';
import { findRecap, recaps } from '../content/index.ts';
import { previewLinkLines } from '../jobs/preview-link.ts';
import { configOrExit, readDotEnv } from '../server/startup.ts';

const USAGE = `Usage: npm run preview -- WEEK

Prints a link that shows the week on the site before it is public: its page exactly as it will
be, and its e-mail as it will be sent. The link works for 7 days for anyone who has it; it is never
cached publicly and search engines are told not to index it.

  WEEK         the week's date such as ${recaps[0]?.date ?? '2025-07-14'}, or its path
  -h, --help   show this help`;

function usageError(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

function parseWeek(argv: string[]) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: true });
  } catch (error) {
    usageError(error instanceof Error ? error.message : String(error));
  }
  if (parsed.values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (parsed.positionals.length !== 1) usageError('Name one week, e.g. npm run preview -- 2026-11-30');
  const week = parsed.positionals[0]!.trim();
  const recap = findRecap(week);
  if (!recap) usageError(`There is no week "${week}" in content/recaps. The newest: ${recaps.slice(0, 3).map((r) => r.date).join(', ')}.`);
  return recap;
}

const recap = parseWeek(process.argv.slice(2));
readDotEnv();
const config = await configOrExit('The preview link cannot be made');
const lines = previewLinkLines({ recap, now: new Date(), siteUrl: config.siteUrl, secret: config.unsubscribeSecret, schedule: config.digest });
for (const line of lines.stdout) console.log(line);
for (const line of lines.stderr) console.error(line);
