// `npm run digest -- [--dry-run] [--recap WEEK] [--to EMAIL] [--json] [--timeout SECONDS]`: the Monday job, run once
// by hand; `--history` lists past runs, `--settle BATCH send|skip` settles a batch reported unknown. Progress goes to stderr every couple of seconds, the summary to stdout; the exit code
// is 0 when nothing failed, 1 when something did, 2 for bad arguments.
import { parseArgs } from 'node:util';
import { emailProblem, normalizeEmail } from '../content/email-address.ts';
import { findRecap, recaps } from '../content/index.ts';
import { configOrExit, readDotEnv, storeOrExit } from '../server/startup.ts';
import { DEFAULT_DELIVERY_POLICY, MAX_REQUEST_TIMEOUT_MS } from '../server/mail/delivery-policy.ts';
import type { DigestProgress, DigestReport } from '../server/mail/digest/run.ts';
import type { Mailer } from '../server/mail/types.ts';
import type { Store } from '../server/store/types.ts';

const PROGRESS_EVERY_MS = 2_000;
const HISTORY_ROWS = 20;
/** --history shows the mail outbox of the last week. */
const OUTBOX_DAYS = 7;

const USAGE = `Usage: npm run digest -- [--dry-run] [--recap WEEK] [--to EMAIL] [--json] [--timeout SECONDS]
       npm run digest -- --history [--json]
       npm run digest -- --settle BATCH send|skip

Sends the newest public recap (from its date at 09:00 in DIGEST_TZ) to every active subscriber who does not have it yet.
Run it again at any time: whoever already has the recap is skipped.

  --dry-run      render and count the e-mails; send nothing, record nothing
  --recap WEEK   send this week instead of the newest: a date such as ${recaps[0]?.date ?? '2025-07-14'}
                 or its path such as ${recaps[0]?.path ?? '/weekly-recap-july-14'}
  --to EMAIL     send one test copy to EMAIL only (a coming week too); subscribers and the ledger are untouched
  --json         print the final report as JSON on stdout
  --timeout SECONDS
                 abandon a provider request with no answer after this long and retry it with
                 the same idempotency key, so nothing goes out twice (default ${DEFAULT_DELIVERY_POLICY.requestTimeoutMs / 1000})
  --history      list the last ${HISTORY_ROWS} runs (scheduled, manual, tests, dry runs), any unknown batch,
                 and the mail outbox of the last ${OUTBOX_DAYS} days (queued, retrying, failed)
  --settle BATCH send|skip
                 settle a batch a run reported unknown: send if the provider's log shows it
                 did not go out (it goes now, to those still subscribed), skip if it did
  -h, --help     show this help`;

function usageError(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

function parseArguments(argv: string[]) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        'dry-run': { type: 'boolean' },
        recap: { type: 'string' },
        to: { type: 'string' },
        json: { type: 'boolean' },
        timeout: { type: 'string' },
        history: { type: 'boolean' },
        settle: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    usageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  let settle: { batchId: string; action: 'send' | 'skip' } | undefined;
  if (values.settle !== undefined) {
    const action = positionals[0];
    if (!/^\d{1,18}$/.test(values.settle.trim())) usageError(`--settle ${values.settle}: a batch is named by its number, e.g. --settle 42 send`);
    if (positionals.length !== 1 || (action !== 'send' && action !== 'skip')) usageError(`--settle ${values.settle}: say what to do with it: send (it did not go out) or skip (it did)`);
    settle = { batchId: values.settle.trim(), action };
  } else if (positionals.length > 0) {
    usageError(`Unexpected argument: ${positionals[0]}`);
  }
  let recapWeek: string | undefined;
  if (values.recap !== undefined) {
    const recap = findRecap(values.recap.trim());
    if (!recap) {
      usageError(`--recap ${values.recap}: there is no such recap. Known weeks, newest first: ${recaps.slice(0, 5).map((r) => r.date).join(', ')}, …`);
    }
    recapWeek = recap.date;
  }
  let to: string | undefined;
  if (values.to !== undefined) {
    to = normalizeEmail(values.to);
    const problem = emailProblem(to);
    if (problem) usageError(`--to ${values.to}: ${problem}`);
  }
  let requestTimeoutMs: number | undefined;
  if (values.timeout !== undefined) {
    const seconds = Number(values.timeout);
    if (values.timeout.trim() === '' || !Number.isFinite(seconds) || seconds < 0.1 || seconds > MAX_REQUEST_TIMEOUT_MS / 1000) {
      usageError(`--timeout ${values.timeout}: must be a number of seconds from 0.1 to ${MAX_REQUEST_TIMEOUT_MS / 1000}, e.g. --timeout 10`);
    }
    requestTimeoutMs = Math.round(seconds * 1000);
  }
  return { dryRun: values['dry-run'] ?? false, recapWeek, to, json: values.json ?? false, requestTimeoutMs, history: values.history ?? false, settle };
}

const seconds = (ms: number) => (ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`);

function progressLine(p: DigestProgress): string {
  const done = p.sent + p.failed + p.skippedAlreadySent + p.skippedUnsubscribed;
  const rate = p.elapsedMs > 0 ? p.sent / (p.elapsedMs / 1000) : 0;
  const left = Math.max(0, p.total - done);
  const eta = rate > 0 ? seconds((left / rate) * 1000) : '—';
  const percent = p.total > 0 ? Math.min(100, Math.round((done / p.total) * 100)) : 100;
  const verb = p.dryRun ? 'would send' : 'sent';
  return `${verb} ${p.sent}/${p.total} (${percent}% done) · ${p.failed} failed · ${p.skippedAlreadySent} already had it · ${rate.toFixed(1)}/s · ETA ${eta}`;
}

function summary(report: DigestReport): string {
  const lines: string[] = [];
  if (report.recap) lines.push(`Recap: ${report.recap.date} — ${report.recap.headline} (${report.recap.path})`);
  const failedTotal = report.failed.reduce((sum, f) => sum + f.count, 0);
  const row = (label: string, value: number) => `  ${`${label}:`.padEnd(24)}${value}`;
  lines.push(
    row(report.outcome === 'dry-run' ? 'would send' : 'sent', report.sent),
    row('skipped, already sent', report.skippedAlreadySent),
    row('skipped, unsubscribed', report.skippedUnsubscribed),
    row('failed', failedTotal),
    ...report.failed.map((f) => `    ${f.count} × ${f.reason}`),
    row('unknown batches', report.unknown.length),
    `  took ${seconds(report.durationMs)}`,
    report.message,
  );
  return lines.join('\n');
}

type Args = ReturnType<typeof parseArguments>;
type Config = Awaited<ReturnType<typeof configOrExit>>;

const log = { info: (line: string) => console.error(line), warn: (line: string) => console.error(`warning: ${line}`) };

async function showHistory(store: Store, json: boolean): Promise<never> {
  const { historyTable, outboxLines } = await import('../server/mail/digest/run-report.ts');
  try {
    const [runs, open, outbox] = await Promise.all([store.recentDigestRuns(HISTORY_ROWS), store.openDigestBatches(null), store.outboxSummary(OUTBOX_DAYS)]);
    if (json) console.log(JSON.stringify({ runs, openBatches: open, outbox }));
    else {
      console.log(historyTable(runs));
      console.log(`\n${outboxLines(outbox).join('\n')}`);
      for (const batch of open) {
        console.log(`\nBatch ${batch.id} of the ${batch.recapDate} recap (${batch.subscriberIds.length} recipients, written ${batch.createdAt.toISOString()}) is ${batch.state}${batch.failure ? `: ${batch.failure.reason}` : ''}.`);
        if (batch.state === 'unknown') console.log(`  Settle it: npm run digest -- --settle ${batch.id} send   (it did not go out)\n            npm run digest -- --settle ${batch.id} skip   (it did)`);
      }
    }
  } finally {
    await store.close();
  }
  process.exit(0);
}

async function openMailer(config: Config, args: Args) {
  const { createMailer } = await import('../server/mail/index.ts');
  const mailer = await createMailer(config.mailer, args.requestTimeoutMs === undefined ? {} : { policy: { requestTimeoutMs: args.requestTimeoutMs } });
  console.error(
    mailer.kind === 'resend'
      ? `Mailer: Resend, from ${config.mailer.from}`
      : `Mailer: outbox — no e-mail leaves this machine; .eml files go to ${config.mailer.kind === 'outbox' ? config.mailer.dir : ''}`,
  );
  return mailer;
}

async function settle(store: Store, mailer: Mailer, config: Config, args: Args & { settle: NonNullable<Args['settle']> }): Promise<never> {
  const { settleBatch } = await import('../server/mail/digest/settle.ts');
  let result;
  try {
    result = await settleBatch({ store, mailer, unsubscribeSecret: config.unsubscribeSecret, batchId: args.settle.batchId, action: args.settle.action, now: new Date() });
  } finally {
    await store.close();
  }
  console.log(args.json ? JSON.stringify(result) : result.message);
  process.exit(result.ok ? 0 : 1);
}

/** Ctrl-C (or SIGTERM) once: finish and record the batch in flight; twice: quit at once. */
function stopOnSignal(): AbortSignal {
  const controller = new AbortController();
  let interrupted = false;
  const onSignal = (signal: string) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    console.error(`${signal}: stopping after the batch in flight is recorded (press again to quit at once)`);
    controller.abort();
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  return controller.signal;
}

/** Progress on stderr every couple of seconds, and once more at the end if it moved since. */
function progressTicker() {
  let latest: DigestProgress | null = null;
  let printed: DigestProgress | null = null;
  const flush = () => {
    if (latest && latest !== printed) {
      console.error(progressLine(latest));
      printed = latest;
    }
  };
  const ticker = setInterval(flush, PROGRESS_EVERY_MS);
  return {
    onProgress: (progress: DigestProgress) => {
      latest = progress;
    },
    stop: () => {
      clearInterval(ticker);
      flush();
    },
  };
}

async function sendDigest(store: Store, mailer: Mailer, config: Config, args: Args): Promise<never> {
  const [{ runDigestJob }, { runFailed }] = await Promise.all([import('../jobs/digest/job.ts'), import('../server/mail/digest/run-report.ts')]);
  const signal = stopOnSignal();
  const progress = progressTicker();
  let report: DigestReport;
  try {
    const setup = { store, mailer, recaps, siteUrl: config.siteUrl, unsubscribeSecret: config.unsubscribeSecret, freshnessDays: config.digest.freshnessDays, timezone: config.digest.timezone, production: config.env === 'production', retentionDays: config.digest.retentionDays, log };
    ({ report } = await runDigestJob(setup, { mode: 'manual', now: new Date(), recapWeek: args.recapWeek, dryRun: args.dryRun, testRecipient: args.to, onProgress: progress.onProgress, signal }));
    // Run alone, the job also delivers what the mail outbox holds (e.g. confirmations promised while the server was down).
    if (!args.dryRun && !args.to) await deliverQueued(store, config, log);
  } finally {
    progress.stop();
    await store.close();
  }
  console.log(args.json ? JSON.stringify(report) : summary(report));
  process.exit(runFailed(report) ? 1 : 0);
}

/** Delivers the mail outbox's due messages once, within a bound; a failure only warns. */
async function deliverQueued(store: Store, config: Config, log: { info(line: string): void; warn(line: string): void }) {
  const { deliverQueuedMail } = await import('../server/mail/deliver-queued.ts');
  await deliverQueuedMail({ store, config, log }).catch((error: unknown) => log.warn(`the mail outbox could not be delivered: ${error instanceof Error ? error.message : String(error)}`));
}

async function main() {
  const args = parseArguments(process.argv.slice(2));
  // The job's modules are loaded after the arguments are checked, so --help and typos answer at once.
  readDotEnv();
  const config = await configOrExit('The digest cannot run');
  const store = await storeOrExit(config);
  if (args.history) await showHistory(store, args.json);
  const mailer = await openMailer(config, args);
  if (args.settle) await settle(store, mailer, config, { ...args, settle: args.settle });
  await sendDigest(store, mailer, config, args);
}

await main();
