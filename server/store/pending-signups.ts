// Monday's clean-up of double opt-in signups that were never confirmed, over the SQL function of
// supabase/migrations/20261124005010_pending_expires_after_last_confirmation.sql: every backend
// calls it by name (CallFunction), so the rule of when a pending row expires exists once, in SQL.
import type { CallFunction } from './call-function.ts';

export interface PendingSignupStore {
  /**
   * Removes pending rows whose signup and last confirmation e-mail are both older than `days`; says
   * how many. With `limit`, at most that many per call (the caller loops).
   */
  prunePending(days: number, limit?: number): Promise<number>;
}

export function pendingSignupStore(call: CallFunction): PendingSignupStore {
  return {
    async prunePending(days, limit) {
      const answer =
        limit === undefined
          ? await call('prune_pending_subscribers', { p_days: Math.round(days) })
          : await call('prune_pending_subscribers_batch', { p_days: Math.round(days), p_limit: Math.round(limit) });
      return Number(answer ?? 0);
    },
  };
}
