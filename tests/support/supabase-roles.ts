// The roles and default grants a Supabase project has, recreated on a test database so that the
// migrations' revokes and policies are tested against what they face in production: Supabase
// grants its API roles everything in schema public by default, and our migrations take it back.
import pg from 'pg';

// Roles are cluster-wide and several test files share one server, so each is created only if
// missing, and a concurrent creation by another file is not an error.
const ROLES = `
do $$
declare
  wanted text[][] := array[
    array['anon', 'nologin noinherit'],
    array['authenticated', 'nologin noinherit'],
    array['service_role', 'nologin noinherit bypassrls']
  ];
begin
  for i in 1 .. array_length(wanted, 1) loop
    if not exists (select 1 from pg_roles where rolname = wanted[i][1]) then
      begin
        execute format('create role %I %s', wanted[i][1], wanted[i][2]);
      exception
        -- Another test file created it between the check and here (23505 on pg_authid).
        when duplicate_object or unique_violation then null;
      end;
    end if;
  end loop;
end
$$`;

// Per database: what a new Supabase project's public schema grants (see Supabase's
// "Database API 42501 errors" guide, which restores exactly these).
const GRANTS = `
grant usage on schema public to anon, authenticated, service_role;
grant all on all tables in schema public to anon, authenticated, service_role;
grant all on all routines in schema public to anon, authenticated, service_role;
grant all on all sequences in schema public to anon, authenticated, service_role;
alter default privileges in schema public grant all on tables to anon, authenticated, service_role;
alter default privileges in schema public grant all on routines to anon, authenticated, service_role;
alter default privileges in schema public grant all on sequences to anon, authenticated, service_role;`;

/** Run before the migrations, as the database owner. */
export async function createSupabaseRoles(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(ROLES);
    await client.query(GRANTS);
  } finally {
    await client.end();
  }
}
