// Gathers the limit counts asked for in one turn of the event loop and sends them as one statement
// (signup_rate_limit_hit_many), each key once with the sum of its points. A burst of signups from
// one address, or from many readers behind one proxy, would otherwise be a queue of single-row
// upserts on one row, each waiting for the lock of the one before (bench/RESULTS.md). Each caller
// still gets the count as of its own hit: callers of one key are answered in arrival order, the
// last with the key's new total, each earlier one with that total minus the points after it.
import type { RateLimitCount, RateLimitCounters } from '../store/rate-limit-counters.ts';

interface Waiting {
  key: string;
  points: number;
  windowMs: number;
  resolve: (count: RateLimitCount) => void;
  reject: (error: unknown) => void;
}

/**
 * Count statements in flight at once; hits that arrive while they run join the next one. Without a
 * cap every turn of the event loop sent its own statement: under `npm run bench -- signup` (every
 * defence on, PostgreSQL) about 9 hits each, two count statements per signup statement, each one
 * waking the database. Three alternating pairs on a shared 2-core machine (load 4–7): uncapped
 * 0.30, 0.45, 0.42 × raw at 158–173 µs app and 138–152 µs database CPU per signup; two in flight
 * 0.38, 0.51, 0.51 × raw at 134–158 µs and 114–131 µs.
 */
export const COUNT_STATEMENTS_IN_FLIGHT = 2;

/** A flood's backlog goes in statements of this many hits at most. */
const MAX_HITS_PER_STATEMENT = 1_000;

export class RateLimitBatcher {
  private readonly queue: Waiting[] = [];
  private scheduled = false;
  private inFlight = 0;

  constructor(
    private readonly counters: RateLimitCounters,
    private readonly concurrency = COUNT_STATEMENTS_IN_FLIGHT,
  ) {}

  hit(key: string, points: number, windowMs: number): Promise<RateLimitCount> {
    return new Promise((resolve, reject) => {
      this.queue.push({ key, points, windowMs, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.pump();
      });
    });
  }

  private pump() {
    while (this.inFlight < this.concurrency && this.queue.length > 0) {
      this.inFlight++;
      void this.flush().finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0, MAX_HITS_PER_STATEMENT);
    const byKey = new Map<string, Waiting[]>();
    for (const waiting of batch) {
      const callers = byKey.get(waiting.key) ?? [];
      callers.push(waiting);
      byKey.set(waiting.key, callers);
    }
    const hits = [...byKey].map(([key, callers]) => ({
      key,
      points: callers.reduce((sum, caller) => sum + caller.points, 0),
      windowMs: Math.max(...callers.map((caller) => caller.windowMs)),
    }));
    let counts: RateLimitCount[];
    try {
      counts = await this.counters.hitRateLimits(hits);
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
      return;
    }
    hits.forEach((hit, index) => {
      const { points: total, msLeft } = counts[index]!;
      let upTo = total;
      const callers = byKey.get(hit.key)!;
      for (let i = callers.length - 1; i >= 0; i--) {
        callers[i]!.resolve({ points: upTo, msLeft });
        upTo -= callers[i]!.points;
      }
    });
  }
}
