// Part of the daily housekeeping (housekeep.ts) and the CLI, never of a send, beside the prune of
// unconfirmed signups: closed outbox messages (sent, failed, cancelled, unknown) and webhook events
// older than RETENTION_DAYS are removed, so neither table grows for ever. The report's figures stay as they were: the bounces and complaints of the
// events removed are kept as counts in the same statement (supabase/migrations/…_retention.sql),
// and the report's outbox section reads only the last week.
import { plural } from '../../content/text.ts';
import type { DigestStore } from '../../server/store/types.ts';
import { PRUNE_BATCH_ROWS } from './prune-pending.ts';

export const RETENTION_DAYS = 90;

export interface PruneRetainedOptions {
  store: DigestStore;
  days?: number;
  log?: { info(line: string): void; warn(line: string): void };
}

/** Prunes and says how many rows went; a failure is logged and answered with null, as the rest of the housekeeping must still run. */
export async function pruneRetainedRows({ store, days = RETENTION_DAYS, log }: PruneRetainedOptions): Promise<{ outbox: number; events: number } | null> {
  try {
    const pruned = { outbox: 0, events: 0 };
    for (;;) {
      const batch = await store.pruneRetained(days, PRUNE_BATCH_ROWS);
      pruned.outbox += batch.outbox;
      pruned.events += batch.events;
      if (batch.outbox < PRUNE_BATCH_ROWS && batch.events < PRUNE_BATCH_ROWS) break;
    }
    log?.info(`Removed ${plural(pruned.outbox, 'outbox message')} and ${plural(pruned.events, 'webhook event')} older than ${plural(days, 'day')} (RETENTION_DAYS)`);
    return pruned;
  } catch (error) {
    log?.warn(`Old outbox messages and webhook events could not be removed this time: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
}
