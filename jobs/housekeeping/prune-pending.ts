// Part of the daily housekeeping (housekeep.ts) and the CLI, never of a send: double opt-in signups that were never confirmed are removed after
// PENDING_DAYS. Nothing was ever sent to them but the confirmation, so nothing else is lost, and
// an address someone else typed in does not sit on our list for ever.
import { plural } from '../../content/text.ts';
import type { DigestStore } from '../../server/store/types.ts';

export const PENDING_DAYS = 30;

/** Rows deleted per statement: a backlog goes in short transactions that replicas cannot deadlock in. */
export const PRUNE_BATCH_ROWS = 1_000;

export interface PrunePendingOptions {
  store: DigestStore;
  days?: number;
  log?: { info(line: string): void; warn(line: string): void };
}

/**
 * Removes pending signups older than `days` and says how many. A failure is
 * logged and answered with null: the rest of the housekeeping still runs.
 */
export async function prunePendingSignups({ store, days = PENDING_DAYS, log }: PrunePendingOptions): Promise<number | null> {
  try {
    let removed = 0;
    for (;;) {
      const batch = await store.prunePending(days, PRUNE_BATCH_ROWS);
      removed += batch;
      if (batch < PRUNE_BATCH_ROWS) break;
    }
    log?.info(`Removed ${plural(removed, 'unconfirmed signup')} older than ${plural(days, 'day')}`);
    return removed;
  } catch (error) {
    log?.warn(`Unconfirmed signups could not be removed this time: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
}
