// Part of the Monday job: double opt-in signups that were never confirmed are removed after
// PENDING_DAYS. Nothing was ever sent to them but the confirmation, so nothing else is lost, and
// an address someone else typed in does not sit on our list for ever.
import { plural } from '../../content/text.ts';
import type { DigestStore } from '../../server/store/types.ts';

export const PENDING_DAYS = 30;

export interface PrunePendingOptions {
  store: DigestStore;
  days?: number;
  log?: { info(line: string): void; warn(line: string): void };
}

/**
 * Removes pending signups older than `days` and says how many, for the run's report. A failure is
 * logged and answered with null: the digest itself must still go out.
 */
export async function prunePendingSignups({ store, days = PENDING_DAYS, log }: PrunePendingOptions): Promise<number | null> {
  try {
    const removed = await store.prunePending(days);
    log?.info(`Removed ${plural(removed, 'unconfirmed signup')} older than ${plural(days, 'day')}`);
    return removed;
  } catch (error) {
    log?.warn(`Unconfirmed signups could not be removed this time: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
}
