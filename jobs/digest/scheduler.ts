// The Monday job inside the server process: node-cron fires runWeeklyDigest in 'scheduled' mode
// on DIGEST_CRON in DIGEST_TZ. noOverlap keeps a slow run from being joined by the next tick; the
// lease in the database does the same across processes and replicas.
import cron, { type ScheduledTask } from 'node-cron';
import type { Recap } from '../../content/schema.ts';
import type { Logger } from '../../server/logger.ts';
import type { Mailer } from '../../server/mail/types.ts';
import type { DigestStore } from '../../server/store/types.ts';
import { runDigestJob, type DigestSetup } from './job.ts';
import { reportFields, runFailed } from './report.ts';
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
}

export interface DigestScheduler {
  /** When the next run fires, if the schedule has one. */
  nextRun(): Date | null;
  /** Runs the scheduled job now, as the timer would; resolves with its report. */
  runNow(): Promise<DigestReport | null>;
  /**
   * Stops the schedule and asks a run in progress to stop after its current batch; resolves once
   * that batch has been accepted or refused and recorded.
   */
  stop(): Promise<void>;
}

const latest = (a: Date, b: Date | undefined) => (b !== undefined && b.getTime() > a.getTime() ? b : a);

export function startDigestScheduler(options: SchedulerOptions): DigestScheduler {
  const { logger } = options;
  const setup: DigestSetup = {
    ...options,
    production: options.production ?? false,
    log: { info: (line) => logger.info(line), warn: (line) => logger.warn(line) },
  };
  const stopping = new AbortController();
  let running: Promise<DigestReport | null> | null = null;

  /** `scheduledFor`: the cron time that fired it, so a timer a few milliseconds early still sees the week its 09:00 made public. */
  const run = (scheduledFor?: Date): Promise<DigestReport | null> => {
    if (stopping.signal.aborted) return Promise.resolve(null);
    if (running) return running;
    running = (async () => {
      try {
        const { report, prunedPending } = await runDigestJob(setup, { mode: 'scheduled', now: options.now?.() ?? latest(new Date(), scheduledFor), signal: stopping.signal });
        // The same fields the run history keeps (npm run digest -- --history).
        const fields = { prunedPending, ...reportFields(report) };
        if (runFailed(report)) logger.error(fields, `Weekly digest: ${report.message}`);
        else logger.info(fields, `Weekly digest: ${report.message}`);
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

  const task: ScheduledTask = cron.schedule(options.cron, (context) => run(context.date), { timezone: options.timezone, noOverlap: true, name: 'weekly-digest' });

  return {
    nextRun: () => task.getNextRun(),
    runNow: () => run(),
    async stop() {
      stopping.abort();
      await task.stop();
      await task.destroy();
      await running;
    },
  };
}
