// How every store operation reaches the database: a SQL function called by name with named
// arguments, answering a value (mostly jsonb). The SQL store runs `select public.<name>(key := $1, …)`
// (sql-store.ts), the Supabase store posts to /rest/v1/rpc/<name> (supabase.ts); the topic modules
// (subscribers.ts, digest-batches.ts, digest-lease.ts, …) hold the operations, and operations.ts
// assembles them into the Store. So each rule is written once, in supabase/migrations.

/**
 * Calls `public.<name>(key := value, …)`. An array goes to an SQL array parameter as an array and
 * to a json/jsonb one as JSON, like any object (PostgREST's rule, which the SQL store follows).
 */
export type CallFunction = (name: string, args: Record<string, unknown>) => Promise<unknown>;
