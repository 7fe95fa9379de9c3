// npm run db:migrate: applies supabase/migrations to DATABASE_URL, or to the embedded database in
// DATA_DIR, and records them in public.app_migrations. A Supabase project is migrated over its
// direct Postgres connection: the REST interface the server uses cannot run DDL.
import { ConfigError, parseConfig } from '../server/config.ts';
import { loadMigrations, migrate } from '../server/store/migrate.ts';
import { openPGliteStore } from '../server/store/pglite.ts';
import { createPgClient } from '../server/store/postgres.ts';
import { StoreLockedError } from '../server/store/types.ts';

const USAGE = `Usage: npm run db:migrate

Applies what is missing of supabase/migrations to the database the environment names, once each:
  DATABASE_URL   any PostgreSQL, including a Supabase project's direct connection string
  (neither)      the embedded database in DATA_DIR (stop the server first)

For a Supabase project, run it with DATABASE_URL set to the project's connection string
(Dashboard > Connect: "Direct connection", or "Session pooler" on an IPv4-only network):
  DATABASE_URL='postgresql://postgres:PASSWORD@db.PROJECT.supabase.co:5432/postgres' npm run db:migrate
The files are idempotent, so a project migrated earlier with \`supabase db push\` or psql can run
them again; this records them where the server's readiness check looks.`;

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (argv.length > 0) {
    process.stderr.write(`db:migrate: unexpected argument ${argv[0]}\n\n${USAGE}\n`);
    return 2;
  }
  const env = { ...process.env };
  // The server's .env may hold the SUPABASE_* variables too; for this SQL-only command a
  // DATABASE_URL given beside them is the target, not a conflict.
  if (env.DATABASE_URL?.trim()) {
    delete env.SUPABASE_URL;
    delete env.SUPABASE_ANON_KEY;
    delete env.SUPABASE_SERVICE_ROLE_KEY;
  }
  let config;
  try {
    config = await parseConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`db:migrate: ${error.message}\n`);
    return 1;
  }
  const total = (await loadMigrations()).length;

  switch (config.store.kind) {
    case 'supabase':
      process.stderr.write(
        `db:migrate: SUPABASE_URL is set, but migrations need SQL, which the REST interface does not run.\n` +
          `Run this command with DATABASE_URL set to the project's connection string (Dashboard > Connect), e.g.\n` +
          `  DATABASE_URL='postgresql://postgres:PASSWORD@db.PROJECT.supabase.co:5432/postgres' npm run db:migrate\n`,
      );
      return 1;
    case 'postgres': {
      const client = createPgClient(config.store.url, { max: 1 });
      try {
        const applied = await migrate(client);
        const where = new URL(config.store.url);
        process.stdout.write(
          applied.length > 0
            ? `Applied ${applied.length} of ${total} migrations to ${where.host}${where.pathname}: ${applied.join(', ')}\n`
            : `${where.host}${where.pathname} is up to date (${total} migrations).\n`,
        );
        return 0;
      } catch (error) {
        process.stderr.write(`db:migrate: ${(error as Error).message}\n`);
        return 1;
      } finally {
        await client.close();
      }
    }
    case 'pglite': {
      try {
        // Opening the embedded store applies what is missing, under its owner lock.
        const store = await openPGliteStore(config.store.dataDir);
        await store.checkReady();
        await store.close();
      } catch (error) {
        if (!(error instanceof StoreLockedError)) throw error;
        process.stderr.write(`db:migrate: ${error.message}\n`);
        return 1;
      }
      process.stdout.write(`The embedded database in ${config.store.dataDir} is up to date (${total} migrations).\n`);
      return 0;
    }
  }
}

process.exitCode = await main(process.argv.slice(2));
