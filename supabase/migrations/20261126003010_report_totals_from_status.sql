-- The report at 100,000 subscribers, two parts made cheaper (EXPLAIN ANALYZE, bench/RESULTS.md);
-- its answer is unchanged.
-- - The totals count the list by its stored status column (the generated column that is the state
--   rule, and what subscriber_state_of reads first) instead of turning every row into jsonb for
--   subscriber_state_of: 860 of the function's 1,684 ms, 45 ms from the column.
-- - Each subscriber's first history row (its signup) is marked in the window pass that already
--   gives each state's span, instead of a second grouping of the history by subscriber: 249 → 91 ms.
-- Otherwise as in 20261124003010_subscriber_links.sql; replacing the function keeps its grants.
create or replace function public.report_snapshot(p_weeks integer)
returns jsonb
language sql
stable
security invoker
set search_path = ''
-- The planner's row guesses for generate_series and the correlated subqueries put the cost far
-- above jit_above_cost, and compiling the plan took 4.4 s of a 4.5 s call; the query itself runs in
-- milliseconds.
set jit = off
as $$
  with bounds as (
    select date_trunc('week', now()) as this_week,
           greatest(
             date_trunc('week', coalesce((select min(changed_at) from public.subscriber_state_history), now())),
             date_trunc('week', now()) - (greatest(p_weeks, 1) - 1) * interval '1 week'
           ) as first_week
  ),
  weeks as (
    select generate_series(b.first_week, b.this_week, interval '1 week') as week_start from bounds b
  ),
  -- A deleted subscriber's last span ends at its 'deleted' row, which itself counts nowhere.
  -- One pass over the history gives both each state's span and each subscriber's first row.
  history as materialized (
    select state, changed_at as since,
           lead(changed_at) over by_subscriber as until,
           row_number() over by_subscriber = 1 as first
    from public.subscriber_state_history
    window by_subscriber as (partition by subscriber_id order by changed_at, id)
  ),
  spans as (
    select state, since, until from history where state <> 'deleted'
  ),
  -- A state counts at the end of week W when it began in W or before and did not end by then:
  -- +1 in the week it began, -1 in the week it ended, summed up week by week.
  deltas as (
    select s.state, greatest(date_trunc('week', s.since), b.first_week) as week_start, 1 as d from spans s, bounds b
    union all
    select s.state, greatest(date_trunc('week', s.until), b.first_week), -1 from spans s, bounds b where s.until is not null
  ),
  per_week as materialized (
    select week_start, state, sum(d) as d from deltas group by week_start, state
  ),
  grid as (
    select w.week_start, st.state from weeks w cross join (select distinct state from spans) st
  ),
  states as materialized (
    select g.week_start, g.state, (sum(coalesce(p.d, 0)) over (partition by g.state order by g.week_start))::int as n
    from grid g left join per_week p on p.week_start = g.week_start and p.state = g.state
  ),
  -- A subscriber's first state is its signup; read from the history, a signup deleted since still
  -- counts in the week it happened.
  signups as materialized (
    select date_trunc('week', h.since) as week_start, count(*)::int as n
    from history h, bounds b
    where h.first and h.since >= b.first_week
    group by 1
  ),
  sources as (
    select coalesce(nullif(source, ''), '(unknown)') as source, count(*)::int as n
    from public.email_signups group by 1 order by 2 desc, 1 limit 10
  ),
  sends as materialized (
    select recap_date, count(*)::int as sent, min(sent_at) as first_sent, max(sent_at) as last_sent
    from public.digest_deliveries group by recap_date
  ),
  -- From the run history: messages the provider refused, over every real run of the recap.
  run_counts as materialized (
    select recap_date, sum(failed)::int as failed
    from public.digest_runs
    where kind in ('scheduled', 'manual', 'settle') and recap_date is not null
    group by recap_date
  ),
  -- From the write-ahead batches: recipients whose batch could not be settled (unknown) or was
  -- settled as not sent (skipped by the operator).
  batch_counts as materialized (
    select recap_date,
           coalesce(sum(cardinality(subscriber_ids)) filter (where state = 'unknown'), 0)::int as unknown,
           coalesce(sum(cardinality(subscriber_ids)) filter (where state = 'skipped'), 0)::int as skipped
    from public.digest_batches group by recap_date
  ),
  sent_recaps as materialized (
    select recap_date from sends union select recap_date from run_counts union select recap_date from batch_counts
  ),
  attributed as materialized (
    select d.recap_date, e.event_type, count(distinct e.provider_message_id)::int as n
    from public.email_events e
    join public.digest_deliveries d on d.provider_message_id = e.provider_message_id
    where e.event_type in ('email.bounced', 'email.complained')
    group by d.recap_date, e.event_type
  ),
  totals as (
    select status as state, count(*)::int as n from public.email_signups group by 1
  )
  select jsonb_build_object(
    'generatedAt', now(),
    'weeks', (
      select coalesce(jsonb_agg(jsonb_build_object(
        'week', to_char(w.week_start, 'YYYY-MM-DD'),
        'states', (select coalesce(jsonb_object_agg(s.state, s.n), '{}'::jsonb) from states s where s.week_start = w.week_start),
        'signups', coalesce((select g.n from signups g where g.week_start = w.week_start), 0)
      ) order by w.week_start), '[]'::jsonb)
      from weeks w
    ),
    'sources', (select coalesce(jsonb_agg(jsonb_build_object('source', source, 'signups', n) order by n desc, source), '[]'::jsonb) from sources),
    'sends', (
      select coalesce(jsonb_agg(jsonb_build_object(
        'recapDate', to_char(r.recap_date, 'YYYY-MM-DD'),
        'sent', coalesce(s.sent, 0),
        'failed', coalesce(rc.failed, 0),
        'unknown', coalesce(bc.unknown, 0),
        'skipped', coalesce(bc.skipped, 0),
        'firstSentAt', s.first_sent,
        'lastSentAt', s.last_sent,
        'bounced', coalesce((select a.n from attributed a where a.recap_date = r.recap_date and a.event_type = 'email.bounced'), 0),
        'complained', coalesce((select a.n from attributed a where a.recap_date = r.recap_date and a.event_type = 'email.complained'), 0)
      ) order by r.recap_date desc), '[]'::jsonb)
      from sent_recaps r
      left join sends s on s.recap_date = r.recap_date
      left join run_counts rc on rc.recap_date = r.recap_date
      left join batch_counts bc on bc.recap_date = r.recap_date
    ),
    'totals', (select coalesce(jsonb_object_agg(state, n), '{}'::jsonb) from totals)
  );
$$;
