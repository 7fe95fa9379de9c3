-- Signup limits that hold across replicas: one counter row per key (a keyed hash of a network
-- address or of an e-mail address, never the raw value) for the current window. Every replica
-- counts in the same row, so three replicas allow what one does. The counting is one atomic
-- upsert inside a function, so the Supabase backend (REST, no transactions) calls exactly the
-- same statement through /rest/v1/rpc as PGlite and PostgreSQL call directly. The window runs on
-- the database's clock, so replicas whose clocks differ still agree on when it ends.
create table if not exists public.signup_rate_limits (
  key text primary key,
  points integer not null,
  expires_at timestamptz not null
);
create index if not exists signup_rate_limits_expires_at_idx on public.signup_rate_limits (expires_at);
alter table public.signup_rate_limits enable row level security;

-- Adds p_points to the key's counter (a fresh window if there is none or it has run out; always
-- a fresh one when p_force) and answers the counter and the milliseconds left in its window.
create or replace function public.signup_rate_limit_hit(p_key text, p_points integer, p_window_ms integer, p_force boolean default false)
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  counted integer;
  ends timestamptz;
begin
  -- Expired rows are dead weight only; about one call in a thousand sweeps them, so the table
  -- stays the size of one window's traffic without a scheduled job.
  if random() < 0.001 then
    delete from public.signup_rate_limits where expires_at < now();
  end if;
  insert into public.signup_rate_limits as c (key, points, expires_at)
  values (p_key, p_points, now() + p_window_ms * interval '1 millisecond')
  on conflict (key) do update
    set points = case when c.expires_at <= now() or p_force then excluded.points else c.points + excluded.points end,
        expires_at = case when c.expires_at <= now() or p_force then excluded.expires_at else c.expires_at end
  returning c.points, c.expires_at into counted, ends;
  return jsonb_build_object('points', counted, 'ms_left', greatest(0, floor(extract(epoch from (ends - now())) * 1000))::bigint);
end
$$;

-- The counter as it stands, or null when the key has none in a running window.
create or replace function public.signup_rate_limit_peek(p_key text)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select jsonb_build_object('points', points, 'ms_left', greatest(0, floor(extract(epoch from (expires_at - now())) * 1000))::bigint)
  from public.signup_rate_limits where key = p_key and expires_at > now();
$$;

-- Forgets a key's counter; true when there was one.
create or replace function public.signup_rate_limit_reset(p_key text)
returns boolean
language sql
volatile
security invoker
set search_path = ''
as $$
  with gone as (delete from public.signup_rate_limits where key = p_key returning 1)
  select exists (select 1 from gone);
$$;

revoke all on function public.signup_rate_limit_hit(text, integer, integer, boolean) from public;
revoke all on function public.signup_rate_limit_peek(text) from public;
revoke all on function public.signup_rate_limit_reset(text) from public;

do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on public.signup_rate_limits from anon;
    revoke all on function public.signup_rate_limit_hit(text, integer, integer, boolean) from anon;
    revoke all on function public.signup_rate_limit_peek(text) from anon;
    revoke all on function public.signup_rate_limit_reset(text) from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on public.signup_rate_limits from authenticated;
    revoke all on function public.signup_rate_limit_hit(text, integer, integer, boolean) from authenticated;
    revoke all on function public.signup_rate_limit_peek(text) from authenticated;
    revoke all on function public.signup_rate_limit_reset(text) from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant select, insert, update, delete on public.signup_rate_limits to service_role;
    grant execute on function public.signup_rate_limit_hit(text, integer, integer, boolean) to service_role;
    grant execute on function public.signup_rate_limit_peek(text) to service_role;
    grant execute on function public.signup_rate_limit_reset(text) to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
