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

export class RateLimitBatcher {
  private queue: Waiting[] = [];
  private scheduled = false;

  constructor(private readonly counters: RateLimitCounters) {}

  hit(key: string, points: number, windowMs: number): Promise<RateLimitCount> {
    return new Promise((resolve, reject) => {
      this.queue.push({ key, points, windowMs, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    this.scheduled = false;
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
