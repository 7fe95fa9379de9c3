// The simulated Mondays every test run makes on one store (monday-pglite.test.ts and
// monday-postgres.test.ts, one file per store so the two run side by side): a stretch of random
// Mondays from a fixed seed, the stretches once found failing, and the hand-written scenarios of
// known-holes.ts; after each, the invariants of invariants.ts. A failure prints fast-check's seed and
// path and the scenario's event log; `SIM_SEED=… SIM_PATH=…` replays that one scenario,
// `SIM_MONDAYS=N` runs N random Mondays instead of the default and `SIM_SEED=random` new ones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimDatabase } from './database.ts';
import { FOUND_STRETCHES } from './found-stretches.ts';
import { KNOWN_HOLES } from './known-holes.ts';
import { assertMondays, describeFailure, replayFromEnvironment, runAndCheck, WEEKS_PER_SCENARIO } from './mondays.ts';

export interface SimulatedStore {
  name: string;
  available: boolean;
  open(): Promise<SimDatabase>;
  /** Random Mondays a plain test run makes on this store (SIM_MONDAYS overrides). */
  randomMondays: number;
}

export function describeSimulatedMondays({ name, available, open, randomMondays }: SimulatedStore): void {
  const replay = replayFromEnvironment();
  const mondays = Number(process.env.SIM_MONDAYS ?? randomMondays);

  describe(`${name}: simulated Mondays`, () => {
    let db: SimDatabase;
    beforeAll(async () => {
      if (available) db = await open();
    }, 30_000);
    afterAll(async () => {
      await db?.close();
    });

    it.runIf(available && (mondays > 0 || replay !== null))(`${replay ? 'the replayed stretch' : `${mondays} random Mondays`} keep every promise`, async () => {
      await assertMondays(db, mondays, replay);
    }, 600_000);

    // Named in full (each's `$name` cuts a title at 40 characters, and many begin alike).
    for (const { name: title, seed, path } of FOUND_STRETCHES) {
      it.skipIf(!available)(title, async () => {
        await assertMondays(db, WEEKS_PER_SCENARIO, { seed, path });
      });
    }

    for (const { name: title, plan } of KNOWN_HOLES) {
      it.skipIf(!available)(title, async () => {
        const checked = await runAndCheck(db, plan);
        expect(checked.violations, describeFailure(db, checked)).toEqual([]);
      });
    }
  });
}
