// The Monday job inside the server process: node-cron fires runWeeklyDigest in 'scheduled' mode
// on DIGEST_CRON in DIGEST_TZ. noOverlap keeps a slow run from being joined by the next tick; the
// lease in the database does the same across processes and replicas. A run that stops is tried
// again by itself (resume.ts), and each run ends with a notice for the operator (notices.ts).
import cron, { type ScheduledTask } from 'node-cron';
import type { Recap } from '../../content/schema.ts';
import type { Logger } from '../../server/logger.ts';
import type { Mailer } from '../../server/mail/types.ts';
import type { Store } from '../../server/store/types.ts';
import { noticeFor, sendNotice } from './notices.ts';
import { prunePendingSignups } from './prune-pending.ts';
import { presendHook } from './presend.ts';
import { reportFields } from './report.ts';
import { createResumer, DEFAULT_RESUME_POLICY, interruptedScheduledRun, type ResumePolicy } from './resume.ts';
import { runWeeklyDigest, type DigestReport } from './run.ts';

export interface SchedulerOptions {
  cron: string;
  timezone: string;
  freshnessDays: number;
  store: Store;
  mailer: Mailer;
  recaps: readonly Recap[];
  siteUrl: string;
  unsubscribeSecret: string;
  /** NODE_ENV=production, for the pre-send checks. */
  production?: boolean;
  logger: Logger;
  /** The clock, for tests. */
  now?: () => Date;
  /** DIGEST_RESUME_FIRST_SECONDS / DIGEST_RESUME_MAX_SECONDS. */
  resume?: ResumePolicy;
  /** OPERATOR_EMAIL: where the notices go (the log has them either way). */
  operatorEmail?: string;
  /** Look once at start-up for a scheduled run a crash or deploy interrupted, and resume it (default true). */
  resumeInterrupted?: boolean;
}

export interface DigestScheduler {
  /** When the next run fires, if the schedule has one. */
  nextRun(): Date | null;
  /** Runs the scheduled job now, as the timer would; resolves with its report. */
  runNow(): Promise<DigestReport | null>;
  /** When the scheduler tries a stopped run again, if it will. */
  nextResume(): Date | null;
  /**
   * Stops the schedule and asks a run in progress to stop after its current batch; resolves once
   * that batch has been accepted or refused and recorded.
   */
  stop(): Promise<void>;
}

export function startDigestScheduler(options: SchedulerOptions): DigestScheduler {
  const { logger, store } = options;
  const stopping = new AbortController();
  let running: Promise<DigestReport | null> | null = null;
  let nextResume: Date | null = null;
  const log = { info: (line: string) => logger.info(line), warn: (line: string) => logger.warn(line) };

  const runOnce = async (attempt: number): Promise<DigestReport> => {
    const prunedPending = await prunePendingSignups({ store, log });
    const report = await runWeeklyDigest({
      store,
      mailer: options.mailer,
      recaps: options.recaps,
      now: options.now?.() ?? new Date(),
      siteUrl: options.siteUrl,
      unsubscribeSecret: options.unsubscribeSecret,
      mode: 'scheduled',
      freshnessDays: options.freshnessDays,
      timezone: options.timezone,
      log,
      preSend: presendHook({ production: options.production ?? false, log: { warn: (line) => logger.warn(line) } }),
      signal: stopping.signal,
      messagePrefix: attempt > 0 ? `Resumed (try ${attempt}): ` : undefined,
    });
    const failed = report.failed.reduce((sum, f) => sum + f.count, 0);
    // The same fields the run history keeps (npm run digest -- --history).
    const fields = { prunedPending, attempt, ...reportFields(report) };
    if (failed > 0 || report.outcome === 'stopped' || report.outcome === 'unknown') logger.error(fields, `Weekly digest: ${report.message}`);
    else logger.info(fields, `Weekly digest: ${report.message}`);
    return report;
  };

  const afterRun = async (report: DigestReport, attempt: number) => {
    nextResume = stopping.signal.aborted ? null : resumer.afterRun(report, attempt);
    if (nextResume) logger.warn(`Weekly digest: trying again at ${nextResume.toISOString()} (try ${attempt + 1}), with no command needed`);
    const notice = await noticeFor(store, report, { attempt, nextTry: nextResume, nextRun: task.getNextRun() });
    if (notice) await sendNotice(store, options.operatorEmail, notice, log);
  };

  const run = (attempt = 0): Promise<DigestReport | null> => {
    if (stopping.signal.aborted) return Promise.resolve(null);
    if (running) return running;
    if (attempt === 0) resumer.cancel();
    nextResume = null;
    running = (async () => {
      try {
        const report = await runOnce(attempt);
        await afterRun(report, attempt);
        return report;
      } catch (error) {
        logger.error({ err: error }, 'Weekly digest run failed');
        return null;
      } finally {
        running = null;
      }
    })();
    return running;
  };

  const resumer = createResumer({ policy: options.resume ?? DEFAULT_RESUME_POLICY, run: (attempt) => void run(attempt) });
  const task: ScheduledTask = cron.schedule(options.cron, () => run(0), { timezone: options.timezone, noOverlap: true, name: 'weekly-digest' });
  if (options.resumeInterrupted ?? true) void resumeInterrupted();

  /** One query at start-up: was the last scheduled run cut short? Then resume it once its lease can have expired. */
  async function resumeInterrupted() {
    try {
      const last = interruptedScheduledRun(await store.recentDigestRuns(10));
      if (!last || stopping.signal.aborted || running || nextResume) return;
      const policy = options.resume ?? DEFAULT_RESUME_POLICY;
      nextResume = resumer.scheduleTry(1, policy.firstMs);
      logger.warn(`Weekly digest: scheduled run ${last.id} (started ${last.startedAt.toISOString()}) did not finish (${last.outcome ?? 'interrupted'}); resuming it at ${nextResume.toISOString()}`);
    } catch (error) {
      logger.warn({ err: error }, 'Weekly digest: could not check for an interrupted run at start-up');
    }
  }

  return {
    nextRun: () => task.getNextRun(),
    runNow: () => run(0),
    nextResume: () => nextResume,
    async stop() {
      stopping.abort();
      resumer.cancel();
      await task.stop();
      await task.destroy();
      await running;
    },
  };
}
