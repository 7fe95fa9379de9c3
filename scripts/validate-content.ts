// `npm run validate-content`: refreshes the registry of week files, checks every recap and prints
// each problem with its file and field, then renders each recap's e-mail and runs the pre-send
// checks on it (server/mail/digest/presend-checks.ts) with this environment's SITE_URL, and says when each
// coming week will be public and e-mailed. Exits 1 when anything is wrong; a warning (a long subject,
// a scheduled run before a week's page is public) is printed but does not fail.
import { plural } from '../content/text.ts';
import { writeRegistry } from './recap-registry.ts';

const files = await writeRegistry();
let recaps;
try {
  ({ recaps } = await import('../content/index.ts'));
  console.log(`${recaps.length} recaps valid (${files[0]} … ${files.at(-1)}).`);
} catch (error) {
  if (error instanceof Error && error.name === 'ContentError') {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}

const [{ ConfigError, parseConfig }, { readDotEnv }, { checkRecap }, { comingWeekLines, comingWeeks }] = await Promise.all([
  import('../server/config.ts'),
  import('../server/startup.ts'),
  import('../server/mail/digest/presend.ts'),
  import('../jobs/digest/when.ts'),
]);
readDotEnv();
let config;
try {
  // The unsubscribe secret only signs the sample link; no development secret is written for it.
  config = await parseConfig(process.env, async () => 'validate-content-sample-secret-never-used');
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`The pre-send checks cannot run. Fix these environment variables:\n${error.problems.map((p) => `  - ${p}`).join('\n')}`);
    process.exit(1);
  }
  throw error;
}

// When each coming week will be public and e-mailed (DIGEST_CRON, DIGEST_TZ), with a warning for
// a scheduled run that would come before its page is public.
const coming = comingWeekLines(comingWeeks(recaps, new Date(), config.digest));
for (const line of coming.info) console.log(line);
for (const line of coming.warnings) console.warn(line);

const production = config.env === 'production';
let failed = 0;
for (const recap of recaps) {
  for (const result of await checkRecap(recap, config.siteUrl, production)) {
    if (result.status === 'pass') continue;
    if (result.status === 'fail') failed += 1;
    const print = result.status === 'fail' ? console.error : console.warn;
    print(`content/recaps/${recap.date}.ts: ${result.status === 'fail' ? 'error' : 'warning'}: ${result.title}: ${result.detail}${result.fix ? ` Fix: ${result.fix}` : ''}`);
  }
}
if (failed > 0) {
  console.error(`${plural(failed, 'pre-send check')} failed (SITE_URL ${config.siteUrl}${production ? ', production' : ''}); the digest refuses to send such a recap.`);
  process.exit(1);
}
console.log(`${recaps.length} recaps pass the pre-send checks (SITE_URL ${config.siteUrl}${production ? ', production' : ''}).`);
