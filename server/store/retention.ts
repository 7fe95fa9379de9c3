// The Monday job's retention prune, over the SQL function of
// supabase/migrations/20261128008020_retention.sql: every backend calls it by name, so what is
// pruned, and how the report's bounce and complaint counts survive it, exists once, in SQL.
import * as z from 'zod';
import type { CallFunction } from './call-function.ts';

/** How many rows of each went. */
export interface RetainedPrune {
  outbox: number;
  events: number;
}

export interface RetentionStore {
  /**
   * Removes closed outbox messages and webhook events older than `days` (at least 7), keeping the
   * report's figures; with `limit`, at most that many of each per call (the caller loops).
   */
  pruneRetained(days: number, limit?: number): Promise<RetainedPrune>;
}

const count = z.union([z.number(), z.string()]).transform(Number);
const pruned = z.object({ outbox: count, events: count });

export function retentionStore(call: CallFunction): RetentionStore {
  return {
    async pruneRetained(days, limit) {
      const answer =
        limit === undefined ? await call('prune_retained', { p_days: Math.round(days) }) : await call('prune_retained_batch', { p_days: Math.round(days), p_limit: Math.round(limit) });
      return pruned.parse(typeof answer === 'string' ? JSON.parse(answer) : answer);
    },
  };
}
