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
   * counts, and for each signup in the order given the id of the subscriber it made active, or
   * null when its row was not written.
   */
  hitRateLimitsAndSignUp(hits: readonly RateLimitHit[], signups: readonly CountedSignup[]): Promise<{ counts: RateLimitCount[]; subscriberIds: (string | null)[] }>;
  /** The key's counter in its running window, or null. */
  peekRateLimit(key: string): Promise<RateLimitCount | null>;
  /** Forgets the key's counter; true when there was one. */
  resetRateLimit(key: string): Promise<boolean>;
}

/** The counts of signup_rate_limit_hit_list and signup_counted_list: two arrays in the order the keys were given. */
interface CountLists {
  points: (number | string)[];
  ms_left: (number | string)[];
}

const fromJson = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;

/**
 * The counts of a statement's answer, one per hit. The answer is arrays rather than an object by
 * key: every key is a hash seen once, and each new key in a parsed object cost the JavaScript
 * engine a new object layout (migration 20261127001010).
 */
function countsInOrder({ points, ms_left: msLeft }: CountLists, hits: readonly RateLimitHit[]): RateLimitCount[] {
  if (points.length !== hits.length || msLeft.length !== hits.length) throw new Error(`the database answered ${points.length} counts for ${hits.length} keys`);
  return hits.map((_hit, index) => ({ points: Number(points[index]), msLeft: Number(msLeft[index]) }));
}

/** The JSON the SQL functions answer with, as both SQL and REST backends receive it. */
export function rateLimitCount(value: unknown): RateLimitCount | null {
  if (value === null || value === undefined) return null;
  const row = fromJson<{ points: number | string; ms_left: number | string }>(value);
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
    hitRateLimits: async (hits) => countsInOrder(fromJson<CountLists>(await call('signup_rate_limit_hit_list', hitArgs(hits))), hits),
    async hitRateLimitsAndSignUp(hits, signups) {
      const position = new Map(hits.map((hit, index) => [hit.key, index]));
      // A limit whose key is not among the hits (never expected) goes as null: the statement reads
      // a limit without a count as over it, and leaves that row out.
      const keyPosition = (key: string) => position.get(key) ?? null;
      const answer = fromJson<CountLists & { ids: (string | null)[] }>(
        await call('signup_counted_list', {
          ...hitArgs(hits),
          p_emails: signups.map(({ row }) => row.email),
          p_sources: signups.map(({ row }) => row.source),
          p_network_hashes: signups.map(({ row }) => row.networkHash),
          p_address_hashes: signups.map(({ row }) => [...row.addressHashes]),
          p_limits: signups.map(({ limits }) => limits.map(({ key, later, limit }) => [keyPosition(key), later, limit])),
        }),
      );
      if (answer.ids.length !== signups.length) throw new Error(`the database answered ${answer.ids.length} rows for ${signups.length} signups`);
      return { counts: countsInOrder(answer, hits), subscriberIds: answer.ids };
    },
    peekRateLimit: async (key) => rateLimitCount(await call('signup_rate_limit_peek', { p_key: key })),
    resetRateLimit: async (key) => (await call('signup_rate_limit_reset', { p_key: key })) === true,
  };
}
