// A real PostgreSQL (DATABASE_URL): a pg pool behind the shared SQL store. TLS follows the URL
// (`sslmode=require` and friends), as pg's connection-string parser reads it.
import pg from 'pg';
import { migrate } from './migrate.ts';
import type { QueryResult, SqlClient, SqlExecutor } from './sql-client.ts';
import { sqlStore } from './sql-store.ts';
import type { Store } from './types.ts';

function executor(target: pg.Pool | pg.PoolClient): SqlExecutor {
  return {
    async query<Row>(sql: string, params: unknown[] = []): Promise<QueryResult<Row>> {
      const result = await target.query(sql, params);
      return { rows: result.rows as Row[], affectedRows: result.rowCount ?? 0 };
    },
    async exec(sql: string) {
      await target.query(sql);
    },
  };
}

export function createPgClient(connectionString: string, options: { max?: number } = {}): SqlClient {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection (database restart) must not crash the process; the
  // pool drops it and the next query opens a fresh one.
  pool.on('error', () => {});
  const pooled = executor(pool);
  return {
    query: (sql, params) => pooled.query(sql, params),
    exec: (sql) => pooled.exec(sql),
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const result = await work(executor(client));
        await client.query('commit');
        return result;
      } catch (error) {
        await client.query('rollback').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

export async function openPostgresStore(connectionString: string, options: { max?: number } = {}): Promise<Store> {
  const client = createPgClient(connectionString, options);
  try {
    await migrate(client);
  } catch (error) {
    await client.close();
    throw error;
  }
  return sqlStore('postgres', client);
}
