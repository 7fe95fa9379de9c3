-- What a server noticed about its own set-up that the operator should fix, kept
-- where the report (a separate process, possibly on another machine) can read it. One row per kind
-- of notice: `trust-proxy` is written when a request arrives through a proxy while TRUST_PROXY=0
-- (every reader then shares the proxy's one signup limit), and removed when a server with
-- TRUST_PROXY set sees a proxied request.
create table if not exists public.server_notices (
  name text primary key,
  detail text not null,
  first_seen_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now()
);
alter table public.server_notices enable row level security;

create or replace function public.server_notice_record(p_name text, p_detail text)
returns void
language sql
volatile
security invoker
set search_path = ''
as $$
  insert into public.server_notices as n (name, detail) values (p_name, p_detail)
    on conflict (name) do update set detail = excluded.detail, last_seen_at = now();
$$;

create or replace function public.server_notice_clear(p_name text)
returns void
language sql
volatile
security invoker
set search_path = ''
as $$
  delete from public.server_notices n where n.name = p_name;
$$;

-- Every notice, oldest first: [{name, detail, first_seen_at, last_seen_at}].
create or replace function public.server_notices()
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select coalesce(jsonb_agg(jsonb_build_object('name', n.name, 'detail', n.detail, 'first_seen_at', n.first_seen_at, 'last_seen_at', n.last_seen_at)
                            order by n.first_seen_at), '[]'::jsonb)
  from public.server_notices n;
$$;

do $$
declare
  fn text;
  fns text[] := array['public.server_notice_record(text, text)', 'public.server_notice_clear(text)', 'public.server_notices()'];
begin
  foreach fn in array fns loop
    execute format('revoke all on function %s from public', fn);
    if exists (select 1 from pg_roles where rolname = 'anon') then
      execute format('revoke all on function %s from anon', fn);
    end if;
    if exists (select 1 from pg_roles where rolname = 'authenticated') then
      execute format('revoke all on function %s from authenticated', fn);
    end if;
    if exists (select 1 from pg_roles where rolname = 'service_role') then
      execute format('grant execute on function %s to service_role', fn);
    end if;
  end loop;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on public.server_notices from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on public.server_notices from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant select, insert, update, delete on public.server_notices to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
