// Starts a throwaway PostgreSQL for the test run when the server binaries are on this machine:
// initdb into a temp directory, its own port, stopped and deleted at exit (the recipe is in
// tests/support/own-postgres.ts). Tests read its URL with inject('postgresUrl'); it is null, and
// those tests say they were skipped, when there is no PostgreSQL here. TEST_DATABASE_URL points
// the suite at an existing server instead.
import type { TestProject } from 'vitest/node';
import { findPgBin, startOwnPostgres } from '../support/own-postgres.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string | null;
  }
}

export default async function setup(project: TestProject) {
  if (process.env.TEST_DATABASE_URL) {
    project.provide('postgresUrl', process.env.TEST_DATABASE_URL);
    return;
  }
  const bin = findPgBin();
  if (!bin) {
    console.warn('[postgres] No PostgreSQL server binaries found: tests against a real PostgreSQL are skipped.');
    project.provide('postgresUrl', null);
    return;
  }
  // Many test files create their own database and pool on it at the same time.
  const server = await startOwnPostgres({ maxConnections: 300 });
  console.log(`[postgres] Throwaway PostgreSQL (${bin}) on port ${server.port}`);
  project.provide('postgresUrl', server.url);
  return () => server.destroy();
}
