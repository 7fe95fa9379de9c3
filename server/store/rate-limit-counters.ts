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

export interface RateLimitCounters {
  /** Adds `points` to the key's counter, opening a fresh window of `windowMs` when none is running (or when `force`). */
  hitRateLimit(key: string, points: number, windowMs: number, force: boolean): Promise<RateLimitCount>;
  /**
   * Adds points to several distinct keys in one statement (no forced windows); answers each key's
   * count, in the order given.
   */
  hitRateLimits(hits: readonly RateLimitHit[]): Promise<RateLimitCount[]>;
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

export function rateLimitStore(call: CallFunction): RateLimitCounters {
  return {
    hitRateLimit: async (key, points, windowMs, force) =>
      rateLimitCount(await call('signup_rate_limit_hit', { p_key: key, p_points: points, p_window_ms: Math.round(windowMs), p_force: force }))!,
    hitRateLimits: async (hits) =>
      rateLimitCounts(
        await call('signup_rate_limit_hit_many', {
          p_keys: hits.map((hit) => hit.key),
          p_points: hits.map((hit) => hit.points),
          p_window_ms: hits.map((hit) => Math.round(hit.windowMs)),
        }),
        hits,
      ),
    peekRateLimit: async (key) => rateLimitCount(await call('signup_rate_limit_peek', { p_key: key })),
    resetRateLimit: async (key) => (await call('signup_rate_limit_reset', { p_key: key })) === true,
  };
}
