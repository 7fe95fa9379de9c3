// Gathers the limit counts asked for in one turn of the event loop and sends them as one statement
// (signup_rate_limit_hit_list), each key once with the sum of its points. A burst of signups from
// one address, or from many readers behind one proxy, would otherwise be a queue of single-row
// upserts on one row, each waiting for the lock of the one before (bench/RESULTS.md). Each caller
// still gets the count as of its own hit: callers of one key are answered in arrival order, the
// last with the key's new total, each earlier one with that total minus the points after it.
//
// A single-mode signup rides along with its own counts (ride): its row goes in the same statement
// (signup_counted_list), written only if every count it was taken with is within its limit, so a
// new address is one round trip to the database instead of two (counts, then row). The limiter
// still answers from those counts as before; the row's fate is the signup route's.
import type { CountedSignup, RateLimitCount, RateLimitCounters } from '../store/rate-limit-counters.ts';
import type { SignupRequest } from '../store/types.ts';

/** A hit waiting for its statement; also the ticket a ride names its counts by. */
export interface Waiting {
  key: string;
  points: number;
  windowMs: number;
  /** The limit of the limiter that counted it (a ride's row is written only within it). */
  limit: number;
  /** Set once its statement has been sent. */
  sent: boolean;
  /** Set when its statement is sent: the points of the same key's hits queued after it in that statement. */
  later: number;
  resolve: (count: RateLimitCount) => void;
  reject: (error: unknown) => void;
}

interface Ride {
  row: SignupRequest;
  hits: readonly Waiting[];
  /** The id of the subscriber the statement made active, or null when it did not write the row. */
  resolve: (subscriberId: string | null) => void;
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
  private rides: Ride[] = [];
  /** While `capturing` runs: where the hits it queues are listed. */
  private capture: Waiting[] | null = null;
  private scheduled = false;
  private inFlight = 0;

  constructor(
    private readonly counters: RateLimitCounters,
    private readonly concurrency = COUNT_STATEMENTS_IN_FLIGHT,
  ) {}

  hit(key: string, points: number, windowMs: number, limit: number): Promise<RateLimitCount> {
    return new Promise((resolve, reject) => {
      const waiting = { key, points, windowMs, limit, sent: false, later: 0, resolve, reject };
      this.queue.push(waiting);
      this.capture?.push(waiting);
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.pump();
      });
    });
  }

  /**
   * Runs `count` (which asks limiters to count) and lists in `hits` the hits it queued: a limiter
   * asks this batcher synchronously when it counts, and asks nothing when it refuses from memory.
   */
  capturing<T>(hits: Waiting[], count: () => T): T {
    this.capture = hits;
    try {
      return count();
    } finally {
      this.capture = null;
    }
  }

  /**
   * Writes a single-mode signup in the statement that takes `hits` (its counts), if every one is
   * within its limit. Answers the id of the subscriber it made active, or null when the row was
   * not written there (over a limit, the address already on the list or suppressed, the same
   * address earlier in the batch, or its counts already sent): the route then signs it up the
   * usual way, where every rule applies.
   */
  ride(row: SignupRequest, hits: readonly Waiting[]): Promise<string | null> {
    if (hits.length === 0 || hits.some((hit) => hit.sent)) return Promise.resolve(null);
    return new Promise((resolve, reject) => this.rides.push({ row, hits, resolve, reject }));
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
    for (const waiting of batch) waiting.sent = true;
    const rides = this.ridesOf(batch);
    const byKey = new Map<string, Waiting[]>();
    for (const waiting of batch) {
      const callers = byKey.get(waiting.key) ?? [];
      callers.push(waiting);
      byKey.set(waiting.key, callers);
    }
    const hits = [...byKey].map(([key, callers]) => {
      // Each caller is answered with the count as of its own hit: the new total less what came after it.
      let after = 0;
      for (let i = callers.length - 1; i >= 0; i--) {
        callers[i]!.later = after;
        after += callers[i]!.points;
      }
      return { key, points: after, windowMs: Math.max(...callers.map((caller) => caller.windowMs)) };
    });
    let counts: RateLimitCount[];
    try {
      if (rides.length === 0) {
        counts = await this.counters.hitRateLimits(hits);
      } else {
        const answer = await this.counters.hitRateLimitsAndSignUp(hits, rides.map(countedSignup));
        counts = answer.counts;
        rides.forEach((ride, index) => ride.resolve(answer.subscriberIds[index] ?? null));
      }
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
      for (const ride of rides) ride.reject(error);
      return;
    }
    hits.forEach((hit, index) => {
      const { points: total, msLeft } = counts[index]!;
      for (const caller of byKey.get(hit.key)!) caller.resolve({ points: total - caller.later, msLeft });
    });
  }

  /**
   * The rides whose counts are all in this batch, one per address (a repeat in the same moment is
   * told null and signs up the usual way, after the first). A ride with only some of its counts
   * here (a batch cut at its size limit) is told null too; the rest wait for their batch.
   */
  private ridesOf(batch: readonly Waiting[]): Ride[] {
    if (this.rides.length === 0) return [];
    const inBatch = new Set(batch);
    const riding: Ride[] = [];
    const addresses = new Set<string>();
    const waiting: Ride[] = [];
    for (const ride of this.rides) {
      const here = ride.hits.filter((hit) => inBatch.has(hit)).length;
      if (here === 0) waiting.push(ride);
      else if (here < ride.hits.length || addresses.has(ride.row.email)) ride.resolve(null);
      else {
        addresses.add(ride.row.email);
        riding.push(ride);
      }
    }
    this.rides = waiting;
    return riding;
  }
}

/** A ride's row and its limits, in the terms the statement checks them (signup_counted_list). */
function countedSignup({ row, hits }: Ride): CountedSignup {
  return { row, limits: hits.map(({ key, later, limit }) => ({ key, later, limit })) };
}
