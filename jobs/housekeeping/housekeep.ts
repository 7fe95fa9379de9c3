// The daily housekeeping: unconfirmed signups and rows past RETENTION_DAYS are pruned every day at
// HOUSEKEEPING_CRON in DIGEST_TZ, whatever DIGEST_CRON says, so a weekly or monthly schedule never
// lets the tables grow between runs. Every replica prunes; a prune is idempotent and goes in
// bounded batches. Never on a send's path: a backlog must not delay a week's e-mail.
import { plural } from '../../content/text.ts';
import type { DigestStore } from '../../server/store/types.ts';
import { prunePendingSignups } from './prune-pending.ts';
import { pruneRetainedRows } from './prune-retained.ts';

export const HOUSEKEEPING_CRON = '30 3 * * *';

type HousekeepingLog = { info(line: string): void; warn(line: string): void };

/** The click links' repeat window (server/site/routes/go.ts): rows whose window ended by `now` only take room. */
async function pruneClickWindow(store: DigestStore, now: Date, log: HousekeepingLog): Promise<void> {
  try {
    const pruned = await store.pruneLinkClickWindow(now);
    if (pruned > 0) log.info(`Removed ${plural(pruned, 'expired click window row')}`);
  } catch (error) {
    log.warn(`Expired click window rows could not be removed this time: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Every prune; each logs its own failure, so one cannot stop the others. */
export async function housekeep({ store, retentionDays, log, now = new Date() }: { store: DigestStore; retentionDays?: number; log: HousekeepingLog; now?: Date }): Promise<void> {
  await prunePendingSignups({ store, log });
  await pruneRetainedRows({ store, days: retentionDays, log });
  await pruneClickWindow(store, now, log);
}
