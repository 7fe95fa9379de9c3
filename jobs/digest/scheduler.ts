// The Monday job inside the server process: node-cron fires runWeeklyDigest in 'scheduled' mode
// on DIGEST_CRON in DIGEST_TZ. noOverlap keeps a slow run from being joined by the next tick; the
// lease in the database does the same across processes and replicas.
import cron, { type ScheduledTask } from 'node-cron';
import type { Recap } from '../../content/schema.ts';
import type { Logger } from '../../server/logger.ts';
import type { Mailer } from '../../server/mail/types.ts';
import type { Store } from '../../server/store/types.ts';
import { prunePendingSignups } from './prune-pending.ts';
import { presendHook } from './presend.ts';
import { reportFields } from './report.ts';
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

export function startDigestScheduler(options: SchedulerOptions): DigestScheduler {
  const { logger } = options;
  const stopping = new AbortController();
  let running: Promise<DigestReport | null> | null = null;

  const run = (): Promise<DigestReport | null> => {
    if (stopping.signal.aborted) return Promise.resolve(null);
    if (running) return running;
    running = (async () => {
      try {
        const log = { info: (line: string) => logger.info(line), warn: (line: string) => logger.warn(line) };
        const prunedPending = await prunePendingSignups({ store: options.store, log });
        const report = await runWeeklyDigest({
          store: options.store,
          mailer: options.mailer,
          recaps: options.recaps,
          now: options.now?.() ?? new Date(),
          siteUrl: options.siteUrl,
          unsubscribeSecret: options.unsubscribeSecret,
          mode: 'scheduled',
          freshnessDays: options.freshnessDays,
          timezone: options.timezone,
          log: { info: (line) => logger.info(line), warn: (line) => logger.warn(line) },
          preSend: presendHook({ production: options.production ?? false, log: { warn: (line) => logger.warn(line) } }),
          signal: stopping.signal,
        });
        const failed = report.failed.reduce((sum, f) => sum + f.count, 0);
        // The same fields the run history keeps (npm run digest -- --history).
        const fields = { prunedPending, ...reportFields(report) };
        if (failed > 0 || report.outcome === 'stopped' || report.outcome === 'unknown') logger.error(fields, `Weekly digest: ${report.message}`);
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

  const task: ScheduledTask = cron.schedule(options.cron, () => run(), { timezone: options.timezone, noOverlap: true, name: 'weekly-digest' });

  return {
    nextRun: () => task.getNextRun(),
    runNow: run,
    async stop() {
      stopping.abort();
      await task.stop();
      await task.destroy();
      await running;
    },
  };
}
