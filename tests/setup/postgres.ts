// Starts a throwaway PostgreSQL for the test run when the server binaries are on this machine:
// initdb into a temp directory, its own port, stopped and deleted at exit (the recipe is in
// scripts/own-postgres.ts). Tests read its URL with inject('postgresUrl'); it is null, and
// those tests say they were skipped, when there is no PostgreSQL here. TEST_DATABASE_URL points
// the suite at an existing server instead.
//
// It also makes the template databases every test database is copied from (tests/support/
// postgres.ts): running every migration takes seconds per database, copying a migrated one a
// fraction of that, and the copy is made by the project's own migrator, so it is exactly what
// `npm run db:migrate` leaves.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../server/store/migrate.ts';
import { createPgClient } from '../../server/store/postgres.ts';
import { findPgBin, startOwnPostgres } from '../../scripts/own-postgres.ts';
import { createSupabaseRoles } from '../support/supabase-roles.ts';

export interface TestPostgres {
  url: string;
  /** Every migration applied, on a database without Supabase's roles. */
  migratedTemplate: string;
  /** Supabase's roles and default grants first, then every migration, as `supabase db push` leaves a project. */
  supabaseTemplate: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string | null;
    postgres: TestPostgres | null;
  }
}

function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function asAdmin(serverUrl: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/**
 * A migrated database marked as a template. Connections to it are then refused: PostgreSQL
 * copies a database only while nobody is connected to it, and a test connecting to the template
 * by mistake would make every later copy fail.
 */
async function createTemplate(serverUrl: string, name: string, prepare: (url: string) => Promise<void> = async () => {}): Promise<string> {
  await asAdmin(serverUrl, `create database ${name}`);
  const url = databaseUrl(serverUrl, name);
  await prepare(url);
  const client = createPgClient(url, { max: 1 });
  try {
    await migrate(client);
  } finally {
    await client.close();
  }
  await asAdmin(serverUrl, `alter database ${name} with is_template true allow_connections false`);
  return name;
}

async function dropTemplate(serverUrl: string, name: string): Promise<void> {
  await asAdmin(serverUrl, `alter database ${name} with is_template false allow_connections true`);
  await asAdmin(serverUrl, `drop database if exists ${name} with (force)`);
}

async function startTestPostgres(): Promise<{ provided: TestPostgres | null; stop: () => Promise<void> }> {
  let url = process.env.TEST_DATABASE_URL;
  let stopServer = async () => {};
  if (!url) {
    const bin = findPgBin();
    if (!bin) {
      console.warn('[postgres] No PostgreSQL server binaries found: tests against a real PostgreSQL are skipped.');
      return { provided: null, stop: async () => {} };
    }
    // Many test files create their own database and pool on it at the same time.
    const server = await startOwnPostgres({ maxConnections: 300 });
    console.log(`[postgres] Throwaway PostgreSQL (${bin}) on port ${server.port}`);
    url = server.url;
    stopServer = () => server.destroy();
  }
  const serverUrl = url;
  // Unique names, so that two runs against one TEST_DATABASE_URL server do not meet.
  const suffix = randomBytes(4).toString('hex');
  // The plain template first: Supabase's roles are cluster-wide, and the migrations grant to them
  // once they exist.
  const migratedTemplate = await createTemplate(serverUrl, `lw_template_${suffix}`);
  const supabaseTemplate = await createTemplate(serverUrl, `lw_template_supabase_${suffix}`, createSupabaseRoles);
  return {
    provided: { url: serverUrl, migratedTemplate, supabaseTemplate },
    async stop() {
      if (process.env.TEST_DATABASE_URL) {
        await dropTemplate(serverUrl, migratedTemplate);
        await dropTemplate(serverUrl, supabaseTemplate);
      }
      await stopServer();
    },
  };
}

// Every project that needs PostgreSQL lists this file, and each project runs its global set-up
// itself; the projects of one run share a single server (kept on the process, where all of them
// run their set-up), which stops when the last of them finishes.
const SHARED = Symbol.for('launched-weekly.test-postgres');
interface Shared {
  users: number;
  started: ReturnType<typeof startTestPostgres>;
}
const holder = globalThis as { [SHARED]?: Shared };

export default async function setup(project: TestProject) {
  const shared = (holder[SHARED] ??= { users: 0, started: startTestPostgres() });
  shared.users += 1;
  const { provided } = await shared.started;
  project.provide('postgres', provided);
  project.provide('postgresUrl', provided?.url ?? null);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    delete holder[SHARED];
    await (await shared.started).stop();
  };
}
