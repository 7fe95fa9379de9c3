// The subscriber's life, checked against the table (server/subscribers/lifecycle.ts) over generated
// lives on PGlite and PostgreSQL: two readers, each a mailbox written four ways (dots, googlemail,
// case, + and - tags), in either signup mode, driven through the app's routes. A failure names its
// seed and path (replay: SEED=… SEED_PATH=… npx vitest run tests/subscriber-model) and the shortest
// sequence of events fast-check shrank it to. MODEL_LIVES sets how many lives each store runs.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { postgresUrl } from '../support/postgres.ts';
import { sqlBackends, type OpenedSqlBackend } from '../support/sql-backends.ts';
import { lifeProperty, runOptions } from './life.ts';
import { pgliteFromSeed } from './stores.ts';
import { startLifeSystem, type LifeSystem } from './system.ts';

const LIVES = Number(process.env.MODEL_LIVES ?? 1000);
const EVENTS_PER_LIFE = 6;

const stores = [
  { name: 'PGlite (from the seed)', available: true, open: pgliteFromSeed },
  { name: 'PostgreSQL', available: postgresUrl !== null, open: () => sqlBackends[1]!.open() },
];

for (const backend of stores) {
  describe.skipIf(!backend.available)(`the subscriber's life on ${backend.name}`, () => {
    let opened: OpenedSqlBackend;
    let system: LifeSystem;
    beforeAll(async () => {
      opened = await backend.open();
      system = await startLifeSystem(opened.store, opened.sql);
    });
    afterAll(async () => {
      await system?.close();
      await opened?.cleanup();
    });

    it(`follows the table in ${LIVES} generated lives`, async () => {
      await fc.assert(lifeProperty(system, EVENTS_PER_LIFE), runOptions(LIVES));
    }, 600_000);
  });
}
