-- The figures GET /metrics answers (server/metrics/), read in one call at scrape time: subscribers
-- by state, signups by source and state, the latest sending run and its batches so far, the
-- outbox's open depth and how much of it is held, the notice webhook's queue and the clicks.
-- Each part reads an index or a small table, so a scrape every few seconds costs little.
create or replace function public.metrics_snapshot()
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  with latest_run as (
    select r.* from public.digest_runs r
    where r.kind in ('scheduled', 'manual')
    order by r.started_at desc, r.id desc
    limit 1
  )
  select jsonb_build_object(
    'subscribers', (
      select coalesce(jsonb_object_agg(s.status, s.n), '{}'::jsonb)
      from (select e.status, count(*) as n from public.email_signups e group by e.status) s
    ),
    -- Sources are page paths or 'import'; the largest groups only, so no stray value makes the
    -- answer (and Prometheus' series) grow without bound.
    'signups', (
      select coalesce(jsonb_agg(jsonb_build_object('source', g.source, 'state', g.status, 'n', g.n) order by g.n desc), '[]'::jsonb)
      from (
        select coalesce(left(e.source, 100), 'unknown') as source, e.status, count(*) as n
        from public.email_signups e group by 1, 2 order by 3 desc limit 100
      ) g
    ),
    'run', (
      select jsonb_build_object(
        'kind', r.kind, 'week', r.recap_date, 'started_at', r.started_at, 'finished_at', r.finished_at,
        'outcome', r.outcome, 'sent', r.sent, 'failed', r.failed, 'unknown_batches', r.unknown_batches,
        'messages', (
          select coalesce(jsonb_object_agg(b.state, b.messages), '{}'::jsonb)
          from (
            select d.state, sum(cardinality(d.subscriber_ids)) as messages
            from public.digest_batches d where d.run_id = r.id group by d.state
          ) b
        )
      )
      from latest_run r
    ),
    'outbox', (
      select jsonb_build_object(
        'queued', count(*) filter (where o.state = 'queued'),
        'retrying', count(*) filter (where o.state = 'retrying'),
        'held', count(*) filter (where o.state = 'retrying' and o.last_error like 'held:%')
      )
      from public.mail_outbox o where o.state in ('queued', 'retrying')
    ),
    'clicks', (select coalesce(sum(c.clicks), 0) from public.link_clicks c)
  );
$$;

do $$
begin
  revoke all on function public.metrics_snapshot() from public;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function public.metrics_snapshot() from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on function public.metrics_snapshot() from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant execute on function public.metrics_snapshot() to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
