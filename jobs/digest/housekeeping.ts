// The daily housekeeping: unconfirmed signups and rows past RETENTION_DAYS are pruned every day at
// HOUSEKEEPING_CRON in DIGEST_TZ, whatever DIGEST_CRON says, so a weekly or monthly schedule never
// lets the tables grow between runs. Every replica prunes; a prune is idempotent and goes in
// bounded batches. Never on a send's path: a backlog must not delay a week's e-mail.
import type { DigestStore } from '../../server/store/types.ts';
import { prunePendingSignups } from './prune-pending.ts';
import { pruneRetainedRows } from './prune-retained.ts';

export const HOUSEKEEPING_CRON = '30 3 * * *';

/** Both prunes; each logs its own failure, so one cannot stop the other. */
export async function housekeep({ store, retentionDays, log }: { store: DigestStore; retentionDays?: number; log: { info(line: string): void; warn(line: string): void } }): Promise<void> {
  await prunePendingSignups({ store, log });
  await pruneRetainedRows({ store, days: retentionDays, log });
}
