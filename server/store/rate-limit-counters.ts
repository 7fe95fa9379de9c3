// Counters for the signup limits, kept in the database so that every replica counts in the same
// place (supabase/migrations/20261123000200_signup_rate_limits.sql); a signup is counted in the same
// call that decides it (subscribers.ts, signUpCounted). The keys are keyed hashes made
// by the caller; the store never sees a network or e-mail address here.
import type { CallFunction } from './call-function.ts';

export interface RateLimitCount {
  /** Points counted in the key's current window, this call's included. */
  points: number;
  /** Milliseconds until the window ends and the counter starts again. */
  msLeft: number;
}

export interface RateLimitCounters {
  /** Adds `points` to the key's counter, opening a fresh window of `windowMs` when none is running (or when `force`). */
  hitRateLimit(key: string, points: number, windowMs: number, force: boolean): Promise<RateLimitCount>;
}

const fromJson = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;

/** The JSON the SQL functions answer with, as both SQL and REST backends receive it. */
export function rateLimitCount(value: unknown): RateLimitCount | null {
  if (value === null || value === undefined) return null;
  const row = fromJson<{ points: number | string; ms_left: number | string }>(value);
  return { points: Number(row.points), msLeft: Number(row.ms_left) };
}

export function rateLimitStore(call: CallFunction): RateLimitCounters {
  return {
    hitRateLimit: async (key, points, windowMs, force) =>
      rateLimitCount(await call('signup_rate_limit_hit', { p_key: key, p_points: points, p_window_ms: Math.round(windowMs), p_force: force }))!,
  };
}
