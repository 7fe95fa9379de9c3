// The Monday job inside the server process: node-cron fires runWeeklyDigest in 'scheduled' mode
// on DIGEST_CRON in DIGEST_TZ. noOverlap keeps a slow run from being joined by the next tick; the
// lease in the database does the same across processes and replicas. A run that stops is tried
// again by itself (resume.ts), and each run ends with a notice for the operator (notices.ts).
import cron, { type ScheduledTask } from 'node-cron';
import type { Recap } from '../../content/schema.ts';
import type { Logger } from '../../server/logger.ts';
import type { Mailer } from '../../server/mail/types.ts';
import type { DigestStore } from '../../server/store/types.ts';
import type { DigestSetup } from './job.ts';
import { noticeFor, sendNotice } from './notices.ts';
import { reportFields, runFailed } from './report.ts';
import { createResumer, DEFAULT_RESUME_POLICY, interruptedScheduledRun, type ResumePolicy } from './resume.ts';
import type { DigestReport } from './run.ts';

export interface SchedulerOptions {
  cron: string;
  timezone: string;
  freshnessDays: number;
  store: DigestStore;
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

const latest = (a: Date, b: Date | undefined) => (b !== undefined && b.getTime() > a.getTime() ? b : a);

export function startDigestScheduler(options: SchedulerOptions): DigestScheduler {
  const { logger, store } = options;
  const log = { info: (line: string) => logger.info(line), warn: (line: string) => logger.warn(line) };
  const setup: DigestSetup = { ...options, production: options.production ?? false, log };
  const policy = options.resume ?? DEFAULT_RESUME_POLICY;
  const stopping = new AbortController();
  let running: Promise<DigestReport | null> | null = null;
  let nextResume: Date | null = null;
  /** Whether the operator was told of the current stop (reset when the schedule fires anew). */
  let stopNoticed = false;

  /** After each run: the next try if it stopped, and the operator's notice. */
  const afterRun = async (report: DigestReport, attempt: number) => {
    nextResume = stopping.signal.aborted ? null : resumer.afterRun(report, attempt);
    if (nextResume) logger.warn(`Weekly digest: trying again at ${nextResume.toISOString()} (try ${attempt + 1}), with no command needed`);
    const notice = await noticeFor(store, report, { attempt, nextTry: nextResume, nextRun: task.getNextRun(), stopNoticed });
    if (notice) await sendNotice(store, options.operatorEmail, notice, log);
    if (notice && nextResume) stopNoticed = true;
    if (!nextResume) stopNoticed = false;
  };

  /**
   * `attempt`: 0 for the schedule (or runNow), N for resume try N. `scheduledFor`: the cron time
   * that fired it, so a timer a few milliseconds early still sees the week its 09:00 made public.
   */
  const run = (attempt: number, scheduledFor?: Date): Promise<DigestReport | null> => {
    if (stopping.signal.aborted) return Promise.resolve(null);
    if (running) return running;
    if (attempt === 0) {
      resumer.cancel();
      stopNoticed = false;
    }
    nextResume = null;
    running = (async () => {
      try {
        const now = options.now?.() ?? latest(new Date(), scheduledFor);
        const messagePrefix = attempt > 0 ? `Resumed (try ${attempt}): ` : undefined;
        // The job and its e-mail renderer are loaded by the first run, not with the server.
        const { runDigestJob } = await import('./job.ts');
        const { report, prunedPending } = await runDigestJob(setup, { mode: 'scheduled', now, signal: stopping.signal, messagePrefix });
        // The same fields the run history keeps (npm run digest -- --history).
        const fields = { prunedPending, attempt, ...reportFields(report) };
        if (runFailed(report)) logger.error(fields, `Weekly digest: ${report.message}`);
        else logger.info(fields, `Weekly digest: ${report.message}`);
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

  const resumer = createResumer({ policy, run: (attempt) => void run(attempt) });
  const task: ScheduledTask = cron.schedule(options.cron, (context) => run(0, context.date), { timezone: options.timezone, noOverlap: true, name: 'weekly-digest' });
  if (options.resumeInterrupted ?? true) void resumeInterrupted();

  /** One query at start-up: was the last scheduled run cut short? Then resume it once its lease can have expired. */
  async function resumeInterrupted() {
    try {
      const last = interruptedScheduledRun(await store.recentDigestRuns(10));
      if (!last || stopping.signal.aborted || running || nextResume) return;
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
