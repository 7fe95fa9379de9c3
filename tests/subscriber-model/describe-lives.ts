// One store's share of the model-based test: a database opened once, the app on it in both modes,
// and LIVES generated lives, each on mailboxes of its own. A failure names its seed, path and the
// shortest sequence of events fast-check shrank it to, with that sequence's replayPath; replay it
// with SEED=… SEED_PATH=… SEED_COMMANDS=… npx vitest run tests/subscriber-model/lives-<store>.test.ts.
// MODEL_LIVES sets how many lives run.
import fc from 'fast-check';
import { describe, it } from 'vitest';
import type { OpenedSqlBackend } from '../support/sql-backends.ts';
import { lifeProperty, runOptions } from './life.ts';
import { lifeSystemFor } from './stores.ts';

const LIVES = Number(process.env.MODEL_LIVES ?? 1000);
export const EVENTS_PER_LIFE = 4;

export function describeLives(storeName: string, available: boolean, open: () => Promise<OpenedSqlBackend>): void {
  describe.skipIf(!available)(`the subscriber's life on ${storeName}`, () => {
    const system = lifeSystemFor(open);

    it(`follows the table (server/subscribers/lifecycle.ts) in ${LIVES} generated lives`, async () => {
      await fc.assert(lifeProperty(system(), EVENTS_PER_LIFE), runOptions(LIVES));
    }, Math.max(600_000, LIVES * 100));
  });
}
