// What a scenario is made of, drawn by fast-check from its seed: the shape of each simulated week
// (a deploy that changes DIGEST_CRON or DIGEST_TZ, servers down across the tick, the list's
// changes, the provider's faults, a restore). The finer choices made while it runs (where a replica
// dies, which call fails) come from the plan's own seed, so the plan alone replays the scenario.
import fc from 'fast-check';
import { seededRandom, type SeededRandom } from '../support/seeded-random.ts';
import type { CallFault } from './provider.ts';

export const CRONS = ['0 9 * * 1', '30 7 * * 1', '0 14 * * 1', '45 10 * * 1', '0 9 * * 2'] as const;
export const TIME_ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Europe/London', 'Asia/Tokyo'] as const;

/** Saturdays (UTC) that open a stretch: a few weeks before a change of daylight saving time. */
export const STRETCH_STARTS = ['2026-09-26', '2026-10-03', '2026-10-10', '2026-10-17', '2027-02-20', '2027-02-27', '2027-03-06', '2027-03-13'] as const;

export interface WeekPlan {
  /** A deploy at the start of the week with a new schedule. */
  deploy: { cron: string; timezone: string } | null;
  /** Every server down from `beforeTickMinutes` before the tick, for `minutes`. */
  outage: { beforeTickMinutes: number; minutes: number; killed: boolean } | null;
  joins: number;
  doubleJoins: number;
  leaves: number;
  bounces: number;
  suppressedRejoin: boolean;
  /** Chance, in percent, that one provider call fails (timeout, 429, 5xx, concurrent 409). */
  faultPercent: number;
  /** `hours`: how long a refusal for a day lasts (drawn from the seed when absent). */
  refusal: { afterTickHours: number; kind: 'day' | 'forever'; hours?: number } | null;
  restore: { afterTickHours: number; minutesLater: number } | null;
}

export interface Plan {
  seed: number;
  replicas: number;
  start: string;
  cron: string;
  timezone: string;
  initialReaders: number;
  /** Chance, in percent, that a started replica is killed at one of its store calls. */
  killPercent: number;
  weeks: WeekPlan[];
  /** Deaths chosen by hand (a replica's life, as `r0.2`), in place of the seed's draw for that life. */
  kills?: ForcedKill[];
  /** The answers to the first digest batch calls, in order, in place of the seed's draw for them. */
  digestFaults?: CallFault[];
  /** Readers leaving at a chosen moment: a random active one, `afterTickMinutes` after week `week`'s tick. */
  departures?: { week: number; afterTickMinutes: number; reason: 'unsubscribed' | 'bounced' | 'complained' }[];
}

export interface ForcedKill {
  life: string;
  atCall: number;
  when: 'before' | 'after';
  /** How long it stays down; drawn from the seed when absent. */
  restartAfterMinutes?: number;
}

const minutes = (min: number, max: number) => fc.integer({ min, max });

const weekArbitrary: fc.Arbitrary<WeekPlan> = fc.record({
  deploy: fc.option(fc.record({ cron: fc.constantFrom(...CRONS), timezone: fc.constantFrom(...TIME_ZONES) }), { freq: 4 }),
  outage: fc.option(
    fc.record({
      beforeTickMinutes: minutes(1, 12 * 60),
      minutes: fc.oneof(minutes(2, 90), minutes(2 * 60, 30 * 60), minutes(2 * 24 * 60, 4 * 24 * 60)),
      killed: fc.boolean(),
    }),
    { freq: 3 },
  ),
  joins: fc.integer({ min: 0, max: 4 }),
  doubleJoins: fc.integer({ min: 0, max: 2 }),
  leaves: fc.integer({ min: 0, max: 2 }),
  bounces: fc.integer({ min: 0, max: 1 }),
  suppressedRejoin: fc.boolean(),
  faultPercent: fc.constantFrom(0, 0, 5, 15, 30),
  refusal: fc.option(fc.record({ afterTickHours: fc.integer({ min: -6, max: 40 }), kind: fc.constantFrom<'day' | 'forever'>('day', 'day', 'day', 'day', 'forever') }), { freq: 6 }),
  restore: fc.option(fc.record({ afterTickHours: fc.integer({ min: 50, max: 70 }), minutesLater: minutes(10, 600) }), { freq: 6 }),
});

export function planArbitrary(weeks: number): fc.Arbitrary<Plan> {
  return fc.record({
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    replicas: fc.integer({ min: 1, max: 3 }),
    start: fc.constantFrom(...STRETCH_STARTS),
    cron: fc.constantFrom(...CRONS),
    timezone: fc.constantFrom(...TIME_ZONES),
    initialReaders: fc.integer({ min: 3, max: 9 }),
    killPercent: fc.constantFrom(0, 20, 40),
    weeks: fc.array(weekArbitrary, { minLength: weeks, maxLength: weeks }),
  });
}

/** The seeded generator (mulberry32) for the choices made while a scenario runs. */
export class Dice {
  private readonly random: SeededRandom;

  constructor(seed: number) {
    this.random = seededRandom(seed);
  }

  /** In [0, 1). */
  next(): number {
    return this.random.next();
  }

  int(min: number, max: number): number {
    return this.random.int(min, max);
  }

  chance(percent: number): boolean {
    return this.next() * 100 < percent;
  }

  pick<T>(items: readonly T[]): T {
    return this.random.pick(items);
  }
}
