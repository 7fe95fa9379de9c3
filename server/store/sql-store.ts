// The Store over SQL, shared by the embedded PGlite and a real Postgres: every operation is a
// function of supabase/migrations, called as `select public.<name>(key := $1, …)` (operations.ts
// assembles them). What is left here is the transport: calling, error mapping, readiness.
import { pendingMigrations } from './migrate.ts';
import { storeOver } from './operations.ts';
import { sqlState, type SqlClient } from './sql-client.ts';
import { MigrationsPendingError, StoreUnavailableError, type Store } from './types.ts';

// SQLSTATE classes that mean "the database is not there or not itself", not "your query is wrong".
const UNAVAILABLE_CLASSES = ['08', '53', '57', '58'];
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']);

/** Errors that say the store is unreachable become StoreUnavailableError; the rest pass through. */
export function classifyError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error;
  // Node's socket errors also carry a `code` (ECONNREFUSED); only five-character codes are
  // SQLSTATEs, and EPIPE, five capitals, is Node's.
  const code = sqlState(error);
  const networkCode = code !== undefined && NETWORK_CODES.has(code);
  const state = code && !networkCode && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  // The code, not only the message: when a host name resolves to several addresses (localhost:
  // ::1 and 127.0.0.1) and all refuse, Node reports an AggregateError with an empty message.
  // pg-pool's wait for a free connection ends in "timeout exceeded when trying to connect".
  const isNetwork =
    networkCode ||
    (error instanceof Error && /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|terminat|Connection|closed|timeout/i.test(error.message));
  if ((state && UNAVAILABLE_CLASSES.includes(state.slice(0, 2))) || (!state && isNetwork)) {
    return new StoreUnavailableError('The database is unavailable', { cause: error });
  }
  return error;
}

/**
 * The parameters of a function that take an SQL array (text[], integer[]), as the catalog says:
 * an array goes to those as an array and to any other (jsonb) as JSON, as PostgREST does.
 */
async function arrayParameters(client: SqlClient, name: string): Promise<Set<string>> {
  const result = await client.query<{ name: string }>(
    `select arg.name from pg_proc p, unnest(p.proargnames, p.proargtypes::regtype[]::text[]) as arg(name, type)
     where p.pronamespace = 'public'::regnamespace and p.proname = $1 and arg.type like '%[]'`,
    [name],
  );
  return new Set(result.rows.map((row) => row.name));
}

export function sqlStore(backend: 'pglite' | 'postgres', client: SqlClient): Store {
  const arrays = new Map<string, Set<string>>();
  const call = async (name: string, args: Record<string, unknown>) => {
    try {
      const keys = Object.keys(args);
      if (!arrays.has(name) && keys.some((key) => Array.isArray(args[key]))) arrays.set(name, await arrayParameters(client, name));
      const params = keys.map((key) => {
        const value = args[key];
        return value !== null && typeof value === 'object' && !(Array.isArray(value) && arrays.get(name)?.has(key)) ? JSON.stringify(value) : value;
      });
      const named = keys.map((key, i) => `${key} := $${i + 1}`).join(', ');
      const result = await client.query<{ result: unknown }>(`select public.${name}(${named}) as result`, params);
      return result.rows[0]?.result ?? null;
    } catch (error) {
      throw classifyError(error);
    }
  };
  return storeOver({
    backend,
    call,
    async checkReady() {
      let pending: string[];
      try {
        pending = await pendingMigrations(client);
      } catch (error) {
        throw classifyError(error);
      }
      if (pending.length > 0) throw new MigrationsPendingError(pending);
    },
    close: () => client.close(),
  });
}
