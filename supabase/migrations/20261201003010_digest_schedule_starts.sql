-- Which DIGEST_CRON was in force when. Every scheduling server records its schedule when it starts,
-- with its clock's time. A tick of a schedule that fell while servers were running another one (the
-- newest start before it was of another schedule) was never this schedule's to run: the servers of
-- that time dealt with its week. Without this record, a start after a DIGEST_CRON change, on a
-- database restored from a backup that lost that week's record, told the new schedule's earlier
-- tick "missed" and said no server was running then, when servers were running the old schedule.
create table if not exists public.digest_schedule_starts (
  started_at timestamptz not null,
  cron text not null check (length(cron) between 1 and 200),
  timezone text not null check (length(timezone) between 1 and 100),
  primary key (started_at, cron, timezone)
);
alter table public.digest_schedule_starts enable row level security;

create or replace function public.digest_record_schedule_start(p_cron text, p_timezone text, p_at timestamptz)
returns void
language sql
volatile
set search_path = ''
as $$
  insert into public.digest_schedule_starts (started_at, cron, timezone) values (p_at, p_cron, p_timezone)
    on conflict do nothing;
$$;

-- The schedule of the newest start at or before `p_at`; null when no start is recorded by then
-- (a database from before this record, or a list's very first start).
create or replace function public.digest_schedule_in_force(p_at timestamptz)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select jsonb_build_object('cron', s.cron, 'timezone', s.timezone, 'started_at', s.started_at)
  from public.digest_schedule_starts s
  where s.started_at <= p_at
  order by s.started_at desc
  limit 1;
$$;

do $$
declare
  v_function text;
begin
  foreach v_function in array array[
    'public.digest_record_schedule_start(text, text, timestamptz)',
    'public.digest_schedule_in_force(timestamptz)'
  ] loop
    execute format('revoke all on function %s from public', v_function);
    if exists (select 1 from pg_roles where rolname = 'anon') then
      execute format('revoke all on function %s from anon', v_function);
    end if;
    if exists (select 1 from pg_roles where rolname = 'authenticated') then
      execute format('revoke all on function %s from authenticated', v_function);
    end if;
    if exists (select 1 from pg_roles where rolname = 'service_role') then
      execute format('grant execute on function %s to service_role', v_function);
    end if;
  end loop;
  revoke all on table public.digest_schedule_starts from public;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on table public.digest_schedule_starts from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on table public.digest_schedule_starts from authenticated;
  end if;
end
$$;
