// Simulated Mondays on PGlite (simulated-mondays.ts), whose now() reads the simulated clock.
import { vi } from 'vitest';
import { openPGliteDatabase } from './database.ts';
import { describeSimulatedMondays } from './simulated-mondays.ts';

vi.mock('../../server/mail/templates/render-digest.ts', async (importOriginal) => (await import('./rendering.ts')).memoizedRendering(await importOriginal()));

describeSimulatedMondays({ name: 'PGlite', available: true, open: openPGliteDatabase, randomMondays: 36 });
