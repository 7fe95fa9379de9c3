// The sending lease of a recap, over acquire_digest_lock and release_digest_lock
// (supabase/migrations/20250801000300_digest_lock_function.sql): one holder at a time sends a
// recap; a lease that is not renewed expires.
import type { CallFunction } from './call-function.ts';
import type { DigestLeaseStore } from './types.ts';

export function digestLeaseStore(call: CallFunction): DigestLeaseStore {
  return {
    acquireDigestLock: async (recapDate, holder, leaseMs) =>
      (await call('acquire_digest_lock', { p_recap_date: recapDate, p_holder: holder, p_lease_ms: Math.round(leaseMs) })) === true,
    async releaseDigestLock(recapDate, holder) {
      await call('release_digest_lock', { p_recap_date: recapDate, p_holder: holder });
    },
  };
}
