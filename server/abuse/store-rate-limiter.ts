// rate-limiter-flexible over our own Store. The library has a PostgreSQL backend, but it needs a
// pg pool and a table it creates itself, and the Supabase backend has no SQL connection at all; all
// three of our backends can call the same SQL function (one atomic upsert), PGlite included, so one
// limiter class counts in the database everywhere. What the library adds on top is why it is used:
// keys over the limit are then refused from memory until their window ends (a flood costs one
// database call per address per window, not one per post), and an in-memory insurance limiter
// keeps counting, per process, while the database is unreachable.
import { createRequire } from 'node:module';
import type { RateLimiterMemory as Memory, RateLimiterRes as Res, RateLimiterStoreAbstract as StoreAbstract } from 'rate-limiter-flexible';
import type { RateLimitCount, RateLimitCounters } from '../store/rate-limit-counters.ts';
import { RateLimitBatcher } from './rate-limit-batcher.ts';

// The three classes used, each from its own file of the published package (typed by its index):
// the index itself loads every limiter the library has (Redis, Mongo, DynamoDB, Etcd, …), 0.16 MB
// of JavaScript kept resident for nothing. The base class of the library's own database limiters
// is not exported from the index at run time anyway. One file is one module instance, so these
// are the very classes the library's own code creates and checks.
const requireLimiter = createRequire(import.meta.url);
const RateLimiterStoreAbstract = requireLimiter('rate-limiter-flexible/lib/RateLimiterStoreAbstract.js') as typeof StoreAbstract;
const RateLimiterMemory = requireLimiter('rate-limiter-flexible/lib/RateLimiterMemory.js') as typeof Memory;
export const RateLimiterRes = requireLimiter('rate-limiter-flexible/lib/RateLimiterRes.js') as typeof Res;
export type RateLimiterRes = Res;

/**
 * How long a count may take before the in-memory insurance limiter answers instead. A database
 * that accepts connections but never answers would otherwise hold every signup for the pool's
 * connect timeout once per limit, before the signup itself waits for it again
 * (tests/store-outage.test.ts); a normal count takes a few milliseconds.
 */
export const COUNT_TIMEOUT_MS = 1_000;

export interface StoreRateLimiterOptions {
  counters: RateLimitCounters;
  /** Shared by the limiters of one process, so their counts go to the database together. */
  batcher: RateLimitBatcher;
  keyPrefix: string;
  points: number;
  /** Window length in seconds. */
  duration: number;
}

// The library's store interface is untyped JavaScript; these are the hooks it calls.
export class StoreRateLimiter extends RateLimiterStoreAbstract {
  private readonly counters: RateLimitCounters;
  private readonly batcher: RateLimitBatcher;

  constructor({ counters, batcher, keyPrefix, points, duration }: StoreRateLimiterOptions) {
    super({
      storeClient: counters,
      keyPrefix,
      points,
      duration,
      // Once a key is over the limit it is refused from memory until its window ends.
      inMemoryBlockOnConsumed: points + 1,
      insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration }),
    });
    this.counters = counters;
    this.batcher = batcher;
  }

  /** Whether the key is over its limit and refused from memory for now (consume then asks nobody). */
  blockedInMemory(key: string): boolean {
    const library = this as unknown as { getInMemoryBlockMsBeforeExpire(rlKey: string): number };
    return library.getInMemoryBlockMsBeforeExpire(this.getKey(key)) > 0;
  }

  _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false): Promise<RateLimitCount> {
    // A forced window (the library's block and set) is rare and goes alone; counts are batched.
    const counted = forceExpire ? this.counters.hitRateLimit(rlKey, points, msDuration, true) : this.batcher.hit(rlKey, points, msDuration, this.points);
    // One promise settled by whichever comes first, the count or the timer: two counts per signup,
    // so not Promise.race over a timer's own promise and a finally (three more promises and their
    // callbacks each, garbage at the next collection).
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the signup limit was not counted within ${COUNT_TIMEOUT_MS} ms`)), COUNT_TIMEOUT_MS);
      counted.then(
        (count) => {
          clearTimeout(timer);
          resolve(count);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  _get(rlKey: string): Promise<RateLimitCount | null> {
    return this.counters.peekRateLimit(rlKey);
  }

  _delete(rlKey: string): Promise<boolean> {
    return this.counters.resetRateLimit(rlKey);
  }

  _getRateLimiterRes(_rlKey: string, changedPoints: number, count: RateLimitCount): RateLimiterRes {
    const isFirstInDuration = count.points === changedPoints;
    return new RateLimiterRes(Math.max(this.points - count.points, 0), count.msLeft, count.points, isFirstInDuration);
  }
}
