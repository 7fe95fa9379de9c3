// Counters for the signup limits, kept in the database so that every replica counts in the same
// place (supabase/migrations/20261123000200_signup_rate_limits.sql). The keys are keyed hashes made
// by the caller; the store never sees a network or e-mail address here.
import type { CallFunction } from './call-function.ts';

export interface RateLimitCount {
  /** Points counted in the key's current window, this call's included. */
  points: number;
  /** Milliseconds until the window ends and the counter starts again. */
  msLeft: number;
}

export interface RateLimitHit {
  key: string;
  points: number;
  windowMs: number;
}

/** A limit a counted signup must be within: the key's new total less `later` (the points counted after this post in the same batch) at most `limit`. */
export interface SignupLimit {
  key: string;
  later: number;
  limit: number;
}

/** A single-mode signup row written in the same statement as its counts, if it is within every limit (a SignupRequest's fields for signup_subscribers_many). */
export interface CountedSignup {
  row: { email: string; source: string | null; networkHash: string | null; addressHashes: readonly string[] };
  limits: readonly SignupLimit[];
}

export interface RateLimitCounters {
  /** Adds `points` to the key's counter, opening a fresh window of `windowMs` when none is running (or when `force`). */
  hitRateLimit(key: string, points: number, windowMs: number, force: boolean): Promise<RateLimitCount>;
  /**
   * Adds points to several distinct keys in one statement (no forced windows); answers each key's
   * count, in the order given.
   */
  hitRateLimits(hits: readonly RateLimitHit[]): Promise<RateLimitCount[]>;
  /**
   * As hitRateLimits, and in the same transaction inserts the signups (distinct addresses) that
   * are within all their limits, as the group commit does (signup_subscribers_many): answers the
   * counts and the addresses it made active, with their ids.
   */
  hitRateLimitsAndSignUp(hits: readonly RateLimitHit[], signups: readonly CountedSignup[]): Promise<{ counts: RateLimitCount[]; activated: Map<string, string> }>;
  /** The key's counter in its running window, or null. */
  peekRateLimit(key: string): Promise<RateLimitCount | null>;
  /** Forgets the key's counter; true when there was one. */
  resetRateLimit(key: string): Promise<boolean>;
}

/** signup_rate_limit_hit_many's answer (an object by key) in the order of `hits`. */
export function rateLimitCounts(value: unknown, hits: readonly RateLimitHit[]): RateLimitCount[] {
  const byKey = (typeof value === 'string' ? JSON.parse(value) : value) as Record<string, unknown>;
  return hits.map((hit) => rateLimitCount(byKey[hit.key])!);
}

/** The JSON the SQL functions answer with, as both SQL and REST backends receive it. */
export function rateLimitCount(value: unknown): RateLimitCount | null {
  if (value === null || value === undefined) return null;
  const row = (typeof value === 'string' ? JSON.parse(value) : value) as { points: number | string; ms_left: number | string };
  return { points: Number(row.points), msLeft: Number(row.ms_left) };
}

const hitArgs = (hits: readonly RateLimitHit[]) => ({
  p_keys: hits.map((hit) => hit.key),
  p_points: hits.map((hit) => hit.points),
  p_window_ms: hits.map((hit) => Math.round(hit.windowMs)),
});

export function rateLimitStore(call: CallFunction): RateLimitCounters {
  return {
    hitRateLimit: async (key, points, windowMs, force) =>
      rateLimitCount(await call('signup_rate_limit_hit', { p_key: key, p_points: points, p_window_ms: Math.round(windowMs), p_force: force }))!,
    hitRateLimits: async (hits) => rateLimitCounts(await call('signup_rate_limit_hit_many', hitArgs(hits)), hits),
    async hitRateLimitsAndSignUp(hits, signups) {
      const answer = await call('signup_counted_many', {
        ...hitArgs(hits),
        p_emails: signups.map(({ row }) => row.email),
        p_sources: signups.map(({ row }) => row.source),
        p_network_hashes: signups.map(({ row }) => row.networkHash),
        p_address_hashes: signups.map(({ row }) => [...row.addressHashes]),
        p_limits: signups.map(({ limits }) => limits.map(({ key, later, limit }) => [key, later, limit])),
      });
      const { counts, activated } = (typeof answer === 'string' ? JSON.parse(answer) : answer) as { counts: unknown; activated: Record<string, string> };
      return { counts: rateLimitCounts(counts, hits), activated: new Map(Object.entries(activated)) };
    },
    peekRateLimit: async (key) => rateLimitCount(await call('signup_rate_limit_peek', { p_key: key })),
    resetRateLimit: async (key) => (await call('signup_rate_limit_reset', { p_key: key })) === true,
  };
}
