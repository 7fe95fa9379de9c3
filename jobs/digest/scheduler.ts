// The Monday job inside the server process: node-cron fires runWeeklyDigest in 'scheduled' mode
// on DIGEST_CRON in DIGEST_TZ. noOverlap keeps a slow run from being joined by the next tick; the
// lease in the database does the same across processes and replicas. A run that stops is tried
// again by itself (resume.ts), and each run ends with a notice for the operator (notices.ts).
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import cron, { type ScheduledTask } from 'node-cron';
import type { Recap } from '../../content/schema.ts';
import type { Logger } from '../../server/http/logger.ts';
import type { Mailer } from '../../server/mail/types.ts';
import type { DigestStore } from '../../server/store/types.ts';
import { actOnMissedTick, catchUpMissedTick } from './catch-up.ts';
import type { DigestSetup } from './job.ts';
import { noticeFor, sendNotice } from './notices.ts';
import { prunePendingSignups } from './prune-pending.ts';
import { pruneRetainedRows } from './prune-retained.ts';
import { reportFields, runFailed } from './report.ts';
import { createResumer, DEFAULT_RESUME_POLICY, interruptedScheduledRun, stillInterrupted, type ResumePolicy } from './resume.ts';
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
  /**
   * DIGEST_CATCHUP_HOURS: at start-up (and when node-cron reports a missed tick) run the newest
   * tick late if no scheduled run began for it and it is at most this old (catch-up.ts); 0 or
   * absent: never.
   */
  catchUpHours?: number;
  /** RETENTION_DAYS: what each run, and the daily housekeeping, prunes (job.ts). */
  retentionDays?: number;
}

/**
 * The daily housekeeping's time (in DIGEST_TZ): unconfirmed signups and rows past RETENTION_DAYS
 * are pruned every day, whatever DIGEST_CRON says, so a weekly or monthly schedule never lets the
 * tables grow between runs. Every replica prunes; a prune is idempotent.
 */
export const HOUSEKEEPING_CRON = '30 3 * * *';

export interface DigestScheduler {
  /** When the next run fires, if the schedule has one. */
  nextRun(): Date | null;
  /** Runs the scheduled job now, as the timer would; resolves with its report. */
  runNow(): Promise<DigestReport | null>;
  /** When the scheduler tries a stopped run again, if it will. */
  nextResume(): Date | null;
  /** When the daily housekeeping runs next. */
  nextHousekeeping(): Date | null;
  /** Runs the daily housekeeping now, as its timer would. */
  housekeepNow(): Promise<void>;
  /**
   * Stops the schedule and asks a run in progress to stop after its current batch; resolves once
   * that batch has been accepted or refused and recorded.
   */
  stop(): Promise<void>;
}

/** The daily housekeeping's task; each prune logs its own failure and answers null, so one cannot stop the other. */
function scheduleHousekeeping({ store, timezone, retentionDays }: SchedulerOptions, log: { info(line: string): void; warn(line: string): void }, stopping: AbortSignal) {
  const run = async () => {
    if (stopping.aborted) return;
    await prunePendingSignups({ store, log });
    await pruneRetainedRows({ store, days: retentionDays, log });
  };
  const task: ScheduledTask = cron.schedule(HOUSEKEEPING_CRON, run, { timezone, noOverlap: true, name: 'daily-housekeeping' });
  return { task, run };
}

/** A run's line in the log, with the fields the run history keeps (npm run digest -- --history). */
function logRun(logger: Logger, report: DigestReport, extra: { prunedPending: number | null; attempt: number }) {
  const fields = { ...extra, ...reportFields(report) };
  if (runFailed(report)) logger.error(fields, `Weekly digest: ${report.message}`);
  else logger.info(fields, `Weekly digest: ${report.message}`);
}

const endTask = async (task: ScheduledTask) => {
  await task.stop();
  await task.destroy();
};

const latest = (a: Date, b: Date | undefined) => (b !== undefined && b.getTime() > a.getTime() ? b : a);

export function startDigestScheduler(options: SchedulerOptions): DigestScheduler {
  const { logger, store } = options;
  const log = { info: (line: string) => logger.info(line), warn: (line: string) => logger.warn(line) };
  const setup: DigestSetup = { ...options, production: options.production ?? false, log };
  const policy = options.resume ?? DEFAULT_RESUME_POLICY;
  const stopping = new AbortController();
  let running: Promise<DigestReport | null> | null = null;
  /** The attempt of the run in progress: a tick is never answered by a resume try's report. */
  let runningAttempt = 0;
  let tickAfterResume: Promise<DigestReport | null> | null = null;
  let nextResume: Date | null = null;
  /** Whether the operator was told of the current stop (reset when the schedule fires anew). */
  let stopNoticed = false;

  /** After each run: the next try if it stopped, and the operator's notice. */
  const afterRun = async (report: DigestReport, attempt: number, late: boolean) => {
    nextResume = stopping.signal.aborted ? null : resumer.afterRun(report, attempt);
    if (nextResume) logger.warn(`Weekly digest: trying again at ${nextResume.toISOString()} (try ${attempt + 1}), with no command needed`);
    const notice = await noticeFor(store, report, { attempt, nextTry: nextResume, nextRun: task.getNextRun(), stopNoticed, late });
    if (notice) await sendNotice(store, options.operatorEmail, notice, log);
    if (notice && nextResume) stopNoticed = true;
    if (!nextResume) stopNoticed = false;
  };

  /**
   * `attempt`: 0 for the schedule (or runNow), N for resume try N. `scheduledFor`: the cron time
   * that fired it, so a timer a few milliseconds early still sees the week its 09:00 made public.
   * `latePrefix`: set for a missed tick run late (catch-up.ts), put before the run's message.
   */
  const run = (attempt: number, scheduledFor?: Date, latePrefix?: string): Promise<DigestReport | null> => {
    if (stopping.signal.aborted) return Promise.resolve(null);
    if (running && attempt === 0 && runningAttempt > 0) {
      // A resume try in flight chose its recap before this tick: the tick runs once it ends and
      // chooses the newest public week itself, rather than taking that try's report for its own.
      tickAfterResume ??= running.then(() => {
        tickAfterResume = null;
        return run(0, scheduledFor, latePrefix);
      });
      return tickAfterResume;
    }
    if (running) return running;
    runningAttempt = attempt;
    if (attempt === 0) {
      resumer.cancel();
      stopNoticed = false;
    }
    nextResume = null;
    running = (async () => {
      try {
        const now = options.now?.() ?? latest(new Date(), scheduledFor);
        const messagePrefix = attempt > 0 ? `Resumed (try ${attempt}): ` : latePrefix;
        // The job and its e-mail renderer are loaded by the first run, not with the server.
        const { runDigestJob } = await import('./job.ts');
        const { report, prunedPending } = await runDigestJob(setup, { mode: 'scheduled', now, signal: stopping.signal, messagePrefix });
        logRun(logger, report, { prunedPending, attempt });
        await afterRun(report, attempt, latePrefix !== undefined);
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

  /** Set by the start-up check: its try first asks whether another server finished that run meanwhile. */
  let recheckFirst = false;
  const tryAgain = (attempt: number) => {
    const go = recheckFirst ? stillInterrupted(store, logger) : Promise.resolve(true);
    recheckFirst = false;
    void go.then((still) => (still ? run(attempt) : (nextResume = null)));
  };
  const resumer = createResumer({ policy, run: tryAgain });
  const task: ScheduledTask = cron.schedule(options.cron, (context) => run(0, context.date), { timezone: options.timezone, noOverlap: true, name: 'weekly-digest' });
  const housekeeping = scheduleHousekeeping(options, log, stopping.signal);
  if (options.resumeInterrupted ?? true) void resumeInterrupted();
  const holder = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  if ((options.catchUpHours ?? 0) > 0) {
    void catchUp();
    // The process was frozen (a suspended host, a paused container) across a tick.
    task.on('execution:missed', () => void catchUp());
  }

  /** A tick that fell while no server ran (or this one was frozen): run it late, or tell it once. */
  function catchUp() {
    return catchUpMissedTick({ ...options, catchUpHours: options.catchUpHours ?? 0, store, holder, now: options.now?.() ?? new Date() }).then(
      (decision) => actOnMissedTick(decision, { logger, runLate: (prefix) => (stopping.signal.aborted ? null : run(0, undefined, prefix)), tell: (notice) => sendNotice(store, options.operatorEmail, notice, log) }),
      (error: unknown) => logger.warn({ err: error }, 'Weekly digest: could not check for a missed run'),
    );
  }

  /** One query at start-up: was the last scheduled run cut short? Then resume it once its lease can have expired. */
  async function resumeInterrupted() {
    try {
      const last = interruptedScheduledRun(await store.recentDigestRuns(10));
      if (!last || stopping.signal.aborted || running || nextResume) return;
      recheckFirst = true;
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
    nextHousekeeping: () => housekeeping.task.getNextRun(),
    housekeepNow: housekeeping.run,
    async stop() {
      stopping.abort();
      resumer.cancel();
      await Promise.all([endTask(task), endTask(housekeeping.task)]);
      await running;
    },
  };
}
