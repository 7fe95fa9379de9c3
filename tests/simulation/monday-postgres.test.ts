// Simulated Mondays on the PostgreSQL server (simulated-mondays.ts), whose rows are aged by the
// simulated time that passes.
import { vi } from 'vitest';
import { createTestDatabase, postgresUrl } from '../support/postgres.ts';
import { openPostgresDatabase } from './database.ts';
import { describeSimulatedMondays } from './simulated-mondays.ts';

vi.mock('../../server/mail/templates/render-digest.ts', async (importOriginal) => (await import('./rendering.ts')).memoizedRendering(await importOriginal()));

describeSimulatedMondays({
  name: 'PostgreSQL',
  available: postgresUrl !== null,
  open: async () => {
    const test = await createTestDatabase();
    return openPostgresDatabase(test.url, () => test.drop());
  },
  randomMondays: 36,
});
