-- The report's data at 1,000,000 subscribers (report data <= 1 s at 100,000 and at
-- 1,000,000). EXPLAIN ANALYZE on bench/report.ts's list showed two reads of whole tables taking
-- almost all of the call: the state history grouped by week and move, and the list grouped by
-- source and state. Both still read every row, with less work per row; the answer is unchanged.
-- - The history: date_trunc('week') on a timestamptz looks up the session's time zone for every
--   row; the rows are grouped by quarter hour first (date_bin, plain arithmetic) and only the
--   quarter hours are truncated to weeks.
-- - The list: grouped by the stored source and status columns, which an index on (source, status)
--   answers by itself (an index-only scan); the missing source gets its name afterwards.
-- The index costs the writers one more index entry when a subscriber is added and when its state
-- changes (those updates were never HOT: status is in email_signups_status_active_id_idx's
-- predicate); an update that changes neither column stays HOT. Creating it locks writes to the list
-- for the few seconds the build takes at 1,000,000 rows.
create index if not exists email_signups_source_status_idx on public.email_signups (source, status);

-- As in 20261128008020_retention.sql with the two reads above; replacing the function keeps its
-- grants.
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
  -- The history grouped by week and move: a few hundred rows however long the history is.
  -- First by quarter hour (date_bin is arithmetic on the timestamp), then the quarter hours by
  -- week: date_trunc('week') works in the session's time zone, which costs a time-zone lookup per
  -- row, so it runs once per quarter hour instead of once per history row. The weeks are the same:
  -- a week starts at a local midnight, and the offset from UTC of every time zone in use since 1972
  -- is a whole number of quarter hours, so no week starts inside a quarter hour.
  with quarter_hours as (
    select date_bin('15 minutes', changed_at, timestamptz '1970-01-01 00:00:00+00') as at, state, from_state, count(*) as n
    from public.subscriber_state_history group by 1, 2, 3
  ),
  moves as materialized (
    select date_trunc('week', at) as week, state, from_state, sum(n)::int as n
    from quarter_hours group by 1, 2, 3
  ),
  bounds as (
    select date_trunc('week', now()) as this_week,
           greatest(
             coalesce((select min(week) from moves), date_trunc('week', now())),
             date_trunc('week', now()) - (greatest(p_weeks, 1) - 1) * interval '1 week'
           ) as first_week
  ),
  weeks as (
    select generate_series(b.first_week, b.this_week, interval '1 week') as week_start from bounds b
  ),
  -- A state counts at the end of week W when a subscriber entered it in W or before and had not
  -- left it by then: each move is +1 for the state entered and -1 for the state left, in the week
  -- it happened, summed up week by week. A 'deleted' row is the last move and counts nowhere.
  deltas as (
    select m.state, greatest(m.week, b.first_week) as week_start, m.n as d from moves m, bounds b where m.state <> 'deleted'
    union all
    select m.from_state, greatest(m.week, b.first_week), -m.n from moves m, bounds b where m.from_state is not null
  ),
  per_week as materialized (
    select week_start, state, sum(d) as d from deltas group by week_start, state
  ),
  grid as (
    select w.week_start, st.state from weeks w cross join (select distinct state from moves where state <> 'deleted') st
  ),
  states as materialized (
    select g.week_start, g.state, (sum(coalesce(p.d, 0)) over (partition by g.state order by g.week_start))::int as n
    from grid g left join per_week p on p.week_start = g.week_start and p.state = g.state
  ),
  -- A subscriber's first row (no state left) is its signup; read from the history, a signup
  -- deleted since still counts in the week it happened.
  signups as materialized (
    select m.week as week_start, sum(m.n)::int as n
    from moves m, bounds b
    where m.from_state is null and m.week >= b.first_week
    group by 1
  ),
  -- One read of the list for both the sources and the totals: grouped by the two columns as they
  -- are stored, so it is read from email_signups_source_status_idx alone (an index-only scan of a
  -- few MB instead of the whole table); the missing source is named afterwards, on a dozen rows.
  list as materialized (
    select coalesce(nullif(source, ''), '(unknown)') as source, state, sum(n)::int as n
    from (select source, status as state, count(*) as n from public.email_signups group by 1, 2) stored
    group by 1, 2
  ),
  sources as (
    select source, sum(n)::int as n from list group by 1 order by 2 desc, 1 limit 10
  ),
  sends as materialized (
    select recap_date, sent, first_sent_at as first_sent, last_sent_at as last_sent
    from public.digest_recap_sends
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
  -- The events still kept, plus the messages counted when older events were pruned
  -- (email_event_counts): a message's events are pruned all together, so none is counted twice.
  attributed as materialized (
    select recap_date, event_type, sum(n)::int as n from (
      select d.recap_date, e.event_type, count(distinct e.provider_message_id) as n
      from public.email_events e
      -- An index lookup per event: without the limit the planner walks the whole message index.
      cross join lateral (
        select l.recap_date from public.digest_deliveries l where l.provider_message_id = e.provider_message_id limit 1
      ) d
      where e.event_type in ('email.bounced', 'email.complained') and e.provider_message_id is not null
      group by d.recap_date, e.event_type
      union all
      select c.recap_date, c.event_type, c.messages from public.email_event_counts c
    ) both_sources
    group by recap_date, event_type
  ),
  totals as (
    select state, sum(n)::int as n from list group by 1
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
