// The Monday job as the CLI (bin/digest.ts) and the scheduler (scheduler.ts) both run it: one
// place assembles the run's options (the pre-send checks, the log, the calendar) and prunes
// unconfirmed signups on a real run; whether a run failed is report.ts's runFailed. Neither shell
// decides any of these for itself, so a hand run and a scheduled one cannot drift apart.
import type { Recap } from '../../content/schema.ts';
import type { Mailer } from '../../server/mail/types.ts';
import type { DigestStore } from '../../server/store/types.ts';
import { presendHook } from './presend.ts';
import { prunePendingSignups } from './prune-pending.ts';
import { pruneRetainedRows } from './prune-retained.ts';
import { runWeeklyDigest, type DigestLog, type DigestOptions, type DigestProgress, type DigestReport } from './run.ts';

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
}

export interface DigestJobResult {
  report: DigestReport;
  /** Unconfirmed signups removed before the run; null when not attempted or when it failed. */
  prunedPending: number | null;
}

export function digestJobOptions(setup: DigestSetup, request: DigestRequest): DigestOptions {
  const { store, mailer, recaps, siteUrl, unsubscribeSecret, freshnessDays, timezone, production, log } = setup;
  return {
    store,
    mailer,
    recaps,
    siteUrl,
    unsubscribeSecret,
    freshnessDays,
    timezone,
    log,
    preSend: presendHook({ production, log }),
    ...request,
  };
}

/** A real run sends to the list; a dry run and a test copy only show what it would do. */
export const isRealRun = (request: Pick<DigestRequest, 'dryRun' | 'testRecipient'>) => !request.dryRun && !request.testRecipient;

/**
 * Prunes unconfirmed signups, and outbox messages and webhook events past their retention (a real
 * run only: a dry run or a test copy changes nothing), then runs the digest. Pruning goes first and
 * whatever the recap's fate: a week with nothing to send still cleans up, and a pruning failure
 * only warns, so the digest still goes out.
 */
export async function runDigestJob(setup: DigestSetup, request: DigestRequest): Promise<DigestJobResult> {
  const real = isRealRun(request);
  const prunedPending = real ? await prunePendingSignups({ store: setup.store, log: setup.log }) : null;
  if (real) await pruneRetainedRows({ store: setup.store, days: setup.retentionDays, log: setup.log });
  const report = await runWeeklyDigest(digestJobOptions(setup, request));
  return { report, prunedPending };
}
