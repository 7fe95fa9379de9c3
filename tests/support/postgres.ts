// A fresh database per test file on the throwaway PostgreSQL that tests/setup/postgres.ts starts.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export const postgresUrl: string | null = inject('postgresUrl');

if (!postgresUrl) {
  console.warn('[postgres] No PostgreSQL reachable: skipping tests that need a real PostgreSQL.');
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (!postgresUrl) throw new Error('No PostgreSQL for tests');
  const name = `lw_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const client = new pg.Client({ connectionString: postgresUrl! });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

/** Adds `count` active subscribers reader0001@example.com … in one statement, for tests that need many (five digits and more past 9,999). */
export async function insertReaders(client: pg.Client, count: number): Promise<void> {
  await client.query(
    `insert into public.email_signups (email, source)
     select format('reader%s@example.com', lpad(g::text, greatest(4, length($1::text)), '0')), '/' from generate_series(1, $1::int) g`,
    [count],
  );
}
