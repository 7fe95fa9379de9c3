// The Supabase backend: the project's REST interface (PostgREST) through @supabase/supabase-js.
// Every operation is a function of supabase/migrations, posted to /rest/v1/rpc (operations.ts
// assembles them), with the service-role key, which never leaves the server: signups too, since
// the state rules (suppression, confirmation) are applied by the database's signup function, which
// the browser-facing anon key may not call, and the anon role may not insert into the table at all
// (20261123000210_revoke_anon_signup_insert.sql), so no signup skips the server's checks. The anon
// key is only checked to be one. Migrations are not run from here (REST cannot run DDL): the
// operator applies supabase/migrations, and checkReady says which are missing.
import { createClient, type PostgrestError, type SupabaseClient } from '@supabase/supabase-js';
import { loadMigrations } from './migrate.ts';
import { storeOver } from './operations.ts';
import { MigrationsPendingError, StoreUnavailableError, type Store } from './types.ts';

export interface SupabaseStoreConfig {
  url: string;
  anonKey: string;
  serviceRoleKey: string;
}

/** A request Supabase refused for a reason that is not an outage (bad key, schema mismatch, ...). */
export class SupabaseRequestError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'SupabaseRequestError';
  }
}

// PostgREST cuts every answer at its max-rows setting (1000 on Supabase unless changed).
const MAX_ROWS = 1000;
const REQUEST_TIMEOUT_MS = 10_000;
// A readiness probe has to answer before the orchestrator's own timeout.
const READY_TIMEOUT_MS = 5_000;
const APPLY_HINT = "apply them with DATABASE_URL=<the project's direct connection string> npm run db:migrate";

// PostgREST's own codes for "cannot reach the database" (PGRST000-003) and SQLSTATE classes for
// connection loss, exhausted resources and an operator shutting the server down.
const UNAVAILABLE_CODE = /^(PGRST00\d|08|53|57)/;

interface Answer {
  error: PostgrestError | null;
  status: number;
}

function failure(what: string, { error, status }: Answer): Error {
  const code = error?.code ?? '';
  // The HTTP status as well as the code: an answer without a body has nothing else to go on.
  const about = [status ? `HTTP ${status}` : '', code].filter(Boolean).join(', ');
  const detail = `${error?.message || 'no answer'}${about ? ` (${about})` : ''}`;
  // Status 0: supabase-js got no HTTP answer at all (refused, reset, DNS, timeout).
  if (status === 0 || status >= 500 || status === 429 || UNAVAILABLE_CODE.test(code)) {
    return new StoreUnavailableError(`Supabase is unavailable while ${what}: ${detail}`, { cause: error });
  }
  return new SupabaseRequestError(`Supabase refused ${what}: ${detail}`, code, status);
}

/** The `role` a key acts as: legacy keys are JWTs with a role claim, new ones say it in a prefix. */
function supabaseKeyRole(key: string): string | null {
  if (key.startsWith('sb_publishable_')) return 'anon';
  if (key.startsWith('sb_secret_')) return 'service_role';
  const payload = key.split('.')[1];
  if (key.split('.').length !== 3 || !payload) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { role?: unknown };
    return typeof claims.role === 'string' ? claims.role : null;
  } catch {
    return null;
  }
}

function checkKeys(config: SupabaseStoreConfig) {
  const anonRole = supabaseKeyRole(config.anonKey);
  const serviceRole = supabaseKeyRole(config.serviceRoleKey);
  if (anonRole === 'service_role') {
    throw new Error(
      'SUPABASE_ANON_KEY holds a service-role (secret) key. Use the anon / publishable key from the project’s API settings there; the secret key belongs in SUPABASE_SERVICE_ROLE_KEY only.',
    );
  }
  if (serviceRole !== null && serviceRole !== 'service_role') {
    throw new Error(
      `SUPABASE_SERVICE_ROLE_KEY holds a key for the "${serviceRole}" role, which cannot read subscribers. Use the service_role / secret key from the project’s API settings.`,
    );
  }
}

async function checkReady(service: SupabaseClient, migrationVersions: readonly string[]): Promise<void> {
  const applied = await service
    .from('app_migrations')
    .select('version')
    .limit(MAX_ROWS)
    .retry(false)
    .abortSignal(AbortSignal.timeout(READY_TIMEOUT_MS));
  let done = new Set<string>();
  if (applied.error) {
    // No ledger table at all: nothing was ever migrated through db:migrate.
    const noTable = applied.status === 404 || applied.error.code === 'PGRST205' || applied.error.code === '42P01';
    if (!noTable) {
      const cause = failure('checking readiness', applied);
      throw cause instanceof StoreUnavailableError ? cause : new StoreUnavailableError(cause.message, { cause });
    }
  } else {
    done = new Set((applied.data as { version: string }[]).map((row) => row.version));
  }
  const missing = migrationVersions.filter((version) => !done.has(version));
  if (missing.length > 0) throw new MigrationsPendingError(missing, APPLY_HINT);
}

export async function openSupabaseStore(config: SupabaseStoreConfig): Promise<Store> {
  checkKeys(config);
  const migrationVersions = (await loadMigrations()).map((m) => m.version);
  const closing = new AbortController();
  const fetchUntilClosed: typeof fetch = (input, init) =>
    fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, closing.signal]) : closing.signal });
  const client = (key: string) =>
    createClient(config.url, key, {
      auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
      db: { timeout: REQUEST_TIMEOUT_MS },
      global: { fetch: fetchUntilClosed },
    });
  const service = client(config.serviceRoleKey);
  return storeOver({
    backend: 'supabase',
    async call(name, args) {
      const answer = await service.rpc(name, args);
      if (answer.error) throw failure(`calling ${name}`, answer);
      return answer.data as unknown;
    },
    checkReady: () => checkReady(service, migrationVersions),
    // Requests still in flight (a shutdown during a slow answer) end now instead of holding it up.
    // Without a reason the abort is an AbortError, which supabase-js does not retry.
    close: async () => closing.abort(),
  });
}
