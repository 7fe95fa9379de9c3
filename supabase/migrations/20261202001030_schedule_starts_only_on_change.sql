-- Every scheduling server recorded its DIGEST_CRON each time it started, so a server in a crash
-- loop (restarted every few seconds for a weekend) added a row per restart, without end. Only a
-- change says anything: the schedule in force at an instant is that of the newest start before it,
-- and a start with the same schedule as the one before it changes no answer. A start is now
-- recorded only when the schedule differs from the one in force at its time, and the rows that
-- repeated their predecessor's schedule are removed.
create or replace function public.digest_record_schedule_start(p_cron text, p_timezone text, p_at timestamptz)
returns void
language sql
volatile
set search_path = ''
as $$
  insert into public.digest_schedule_starts (started_at, cron, timezone)
  select p_at, p_cron, p_timezone
  where not exists (
    select 1
    from (
      select s.cron, s.timezone from public.digest_schedule_starts s
      where s.started_at <= p_at
      order by s.started_at desc
      limit 1
    ) in_force
    where in_force.cron = p_cron and in_force.timezone = p_timezone
  )
  on conflict do nothing;
$$;

delete from public.digest_schedule_starts s
using (
  select started_at, cron, timezone,
    lag(cron) over in_order as previous_cron,
    lag(timezone) over in_order as previous_timezone
  from public.digest_schedule_starts
  window in_order as (order by started_at, cron, timezone)
) repeated
where s.started_at = repeated.started_at and s.cron = repeated.cron and s.timezone = repeated.timezone
  and repeated.previous_cron = repeated.cron and repeated.previous_timezone = repeated.timezone;
