// The Monday job as the CLI (bin/digest.ts) and the scheduler (scheduler.ts) both run it: one
// place assembles the run's options (the pre-send checks, the log, the calendar); whether a run
// failed is run-report.ts's runFailed. Neither shell decides any of these for itself, so a hand run and
// a scheduled one cannot drift apart. Pruning is housekeeping (jobs/housekeeping/housekeep.ts), never on a
// scheduled send's path: only a real run from the CLI prunes, after it has sent.
import type { Recap } from '../../content/schema.ts';
import type { Clock } from '../../server/clock.ts';
import type { Mailer } from '../../server/mail/types.ts';
import type { DigestStore } from '../../server/store/types.ts';
import { housekeep } from '../housekeeping/housekeep.ts';
import { presendHook } from '../../server/mail/digest/presend.ts';
import { runWeeklyDigest, type DigestLog, type DigestOptions, type DigestProgress, type DigestReport } from '../../server/mail/digest/run.ts';

/** What every run of this process shares: its store, mailer, content and configuration. */
export interface DigestSetup {
  store: DigestStore;
  mailer: Mailer;
  recaps: readonly Recap[];
  siteUrl: string;
  unsubscribeSecret: string;
  /** DIGEST_FRESHNESS_DAYS */
  freshnessDays: number;
  /** DIGEST_TZ */
  timezone: string;
  /** NODE_ENV=production, for the pre-send checks. */
  production: boolean;
  /** RETENTION_DAYS: how long closed outbox messages and webhook events are kept (default 90). */
  retentionDays?: number;
  /** DIGEST_LEASE_SECONDS, in ms: the sending lease's length. */
  leaseMs?: number;
  /** The sending lease's clock (the scheduler's); the system clock by default. */
  clock?: Clock;
  /** Waits between tries to record a batch's answer; a real wait by default. */
  pause?: DigestOptions['pause'];
  log: DigestLog;
}

/** What one run asks for. */
export interface DigestRequest {
  mode: DigestOptions['mode'];
  now: Date;
  recapWeek?: string;
  dryRun?: boolean;
  testRecipient?: string;
  onProgress?: (progress: DigestProgress) => void;
  signal?: AbortSignal;
  /** The scheduler's "Resumed (try N): ", put before the run's message. */
  messagePrefix?: string;
  /** The history row the tick's claim made for a scheduled run. */
  runId?: string;
}

export interface DigestJobResult {
  report: DigestReport;
}

export function digestJobOptions(setup: DigestSetup, request: DigestRequest): DigestOptions {
  const { store, mailer, recaps, siteUrl, unsubscribeSecret, freshnessDays, timezone, production, log, leaseMs, clock, pause } = setup;
  return {
    store,
    mailer,
    recaps,
    siteUrl,
    unsubscribeSecret,
    freshnessDays,
    timezone,
    log,
    leaseMs,
    clock,
    pause,
    preSend: presendHook({ production, log }),
    ...request,
  };
}

/** A real run sends to the list; a dry run and a test copy only show what it would do. */
export const isRealRun = (request: Pick<DigestRequest, 'dryRun' | 'testRecipient'>) => !request.dryRun && !request.testRecipient;

/**
 * Runs the digest. A real run from the CLI then does the housekeeping (in bounded batches, after
 * the send, so a backlog never delays a week); a scheduled run leaves it to the daily housekeeping.
 */
export async function runDigestJob(setup: DigestSetup, request: DigestRequest): Promise<DigestJobResult> {
  const report = await runWeeklyDigest(digestJobOptions(setup, request));
  if (request.mode === 'manual' && isRealRun(request)) await housekeep({ store: setup.store, retentionDays: setup.retentionDays, log: setup.log });
  return { report };
}
