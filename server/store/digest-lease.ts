// The sending lease of a recap, over acquire_digest_lock and release_digest_lock
// (supabase/migrations/20250801000300_digest_lock_function.sql): one holder at a time sends a
// recap; a lease that is not renewed expires. And the claim of a missed DIGEST_CRON tick
// (20261128002010_digest_tick_claims.sql): one server, ever, runs or tells it.
import type { CallFunction } from './call-function.ts';
import type { DigestLeaseStore } from './types.ts';

export function digestLeaseStore(call: CallFunction): DigestLeaseStore {
  return {
    acquireDigestLock: async (recapDate, holder, leaseMs) =>
      (await call('acquire_digest_lock', { p_recap_date: recapDate, p_holder: holder, p_lease_ms: Math.round(leaseMs) })) === true,
    async releaseDigestLock(recapDate, holder) {
      await call('release_digest_lock', { p_recap_date: recapDate, p_holder: holder });
    },
    claimDigestTick: async (tick, holder) => (await call('digest_claim_tick', { p_tick: tick.toISOString(), p_holder: holder })) === true,
  };
}
