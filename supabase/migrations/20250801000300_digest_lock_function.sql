-- The sending lease as functions, for the Supabase backend: over the REST interface a conditional
-- upsert ("take the row only if it is mine or expired") cannot be expressed, so the store calls
-- these through /rest/v1/rpc. Same statement and semantics as the SQL store's acquireDigestLock.
-- Security invoker: they run with the caller's rights, so only a role that may write digest_locks
-- can take a lease, and execution is granted to the service role alone.
create or replace function public.acquire_digest_lock(p_recap_date date, p_holder text, p_lease_ms integer)
returns boolean
language sql
volatile
security invoker
set search_path = ''
as $$
  with taken as (
    insert into public.digest_locks (recap_date, holder, locked_until)
    values (p_recap_date, p_holder, now() + (p_lease_ms * interval '1 millisecond'))
    on conflict (recap_date) do update
      set holder = excluded.holder, locked_until = excluded.locked_until
      where public.digest_locks.holder = excluded.holder or public.digest_locks.locked_until < now()
    returning 1
  )
  select exists (select 1 from taken);
$$;

create or replace function public.release_digest_lock(p_recap_date date, p_holder text)
returns void
language sql
volatile
security invoker
set search_path = ''
as $$
  delete from public.digest_locks where recap_date = p_recap_date and holder = p_holder;
$$;

-- Postgres lets every role execute a new function; Supabase also grants it to its API roles
-- explicitly through default privileges. Neither may call these.
revoke all on function public.acquire_digest_lock(date, text, integer) from public;
revoke all on function public.release_digest_lock(date, text) from public;

do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function public.acquire_digest_lock(date, text, integer) from anon;
    revoke all on function public.release_digest_lock(date, text) from anon;
    if to_regclass('public.app_migrations') is not null then
      revoke all on public.app_migrations from anon;
    end if;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on function public.acquire_digest_lock(date, text, integer) from authenticated;
    revoke all on function public.release_digest_lock(date, text) from authenticated;
    if to_regclass('public.app_migrations') is not null then
      revoke all on public.app_migrations from authenticated;
    end if;
  end if;
  -- Supabase normally grants its service role everything through default privileges; projects
  -- that turned that off still need exactly what the server and the Monday job use.
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant execute on function public.acquire_digest_lock(date, text, integer) to service_role;
    grant execute on function public.release_digest_lock(date, text) to service_role;
    grant select, insert, update on public.email_signups to service_role;
    grant select, insert on public.digest_deliveries to service_role;
    grant select, insert, update, delete on public.digest_locks to service_role;
    if to_regclass('public.app_migrations') is not null then
      grant select on public.app_migrations to service_role;
    end if;
  end if;
end
$$;

-- Supabase's REST server caches the schema; this makes it see the new functions at once.
notify pgrst, 'reload schema';
