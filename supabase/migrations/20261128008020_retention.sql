-- Sent outbox rows and webhook events older than RETENTION_DAYS are pruned by the
-- Monday job (jobs/digest/prune-retained.ts, beside the prune of unconfirmed signups), and the
-- report's figures do not change.
--
-- What the report reads from the rows pruned:
-- - mail_outbox: only the last 7 days (outbox_recent, OUTBOX_DAYS), and RETENTION_DAYS is at least
--   7 (server/config.ts), so only closed rows (sent, failed, cancelled, unknown) older than that go;
--   a row still queued or retrying is never pruned, however old.
-- - email_events: each recap's bounces and complaints, as the number of distinct messages with such
--   an event (attributed through the ledger). Before an event is deleted, its message is counted in
--   email_event_counts, in the same statement; report_snapshot adds those counts to the events
--   still kept. The events of one message and type go together, only once the newest of them is
--   past the retention, so a message is counted either here or from the events, never both.
--   Every other event (delivery delays, events of messages not in the ledger, events whose message
--   id a deletion forgot) is read by nothing and simply deleted.
-- The engagement tables are counts already (20261128003010), and their receipts, the click window,
-- the link nonces, the rate-limit windows and the mailbox throttles sweep themselves.

create table if not exists public.email_event_counts (
  recap_date date not null,
  event_type text not null check (event_type in ('email.bounced', 'email.complained')),
  messages bigint not null check (messages >= 0),
  primary key (recap_date, event_type)
);
alter table public.email_event_counts enable row level security;

create index if not exists email_events_received_idx on public.email_events (received_at);
create index if not exists mail_outbox_settled_created_idx on public.mail_outbox (created_at) where state in ('sent', 'failed', 'cancelled', 'unknown');

-- Prunes what is older than p_days; says how many rows of each went: {outbox, events}. Security
-- definer, as the role that runs the job may read and update those tables but not delete from them;
-- only that role may call it (grants below).
create or replace function public.prune_retained(p_days integer)
returns jsonb
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  v_cutoff timestamptz := now() - make_interval(days => greatest(p_days, 7));
  v_outbox integer;
  v_events integer;
begin
  delete from public.mail_outbox m
    where m.created_at < v_cutoff and m.state in ('sent', 'failed', 'cancelled', 'unknown');
  get diagnostics v_outbox = row_count;

  -- Whole groups (one message, one type) whose newest event is past the cutoff; events without a
  -- message id are read by nothing.
  with old_groups as (
    select e.provider_message_id, e.event_type
    from public.email_events e
    where e.provider_message_id is not null
    group by e.provider_message_id, e.event_type
    having max(e.received_at) < v_cutoff
  ),
  gone as (
    delete from public.email_events e
    where e.received_at < v_cutoff
      and (e.provider_message_id is null
           or exists (select 1 from old_groups g where g.provider_message_id = e.provider_message_id and g.event_type = e.event_type))
    returning e.provider_message_id, e.event_type
  ),
  counted as (
    select d.recap_date, g.event_type, count(distinct g.provider_message_id) as n
    from gone g
    cross join lateral (
      select l.recap_date from public.digest_deliveries l where l.provider_message_id = g.provider_message_id limit 1
    ) d
    where g.event_type in ('email.bounced', 'email.complained')
    group by d.recap_date, g.event_type
  ),
  added as (
    insert into public.email_event_counts as c (recap_date, event_type, messages)
    select recap_date, event_type, n from counted
    on conflict (recap_date, event_type) do update set messages = c.messages + excluded.messages
    returning 1
  )
  select count(*) into v_events from gone;
  return jsonb_build_object('outbox', v_outbox, 'events', v_events);
end
$$;

-- As in 20261126004010_report_counts_per_recap.sql, with the bounces and complaints of pruned
-- events read from email_event_counts; replacing the function keeps its grants.
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
  with moves as materialized (
    select date_trunc('week', changed_at) as week, state, from_state, count(*)::int as n
    from public.subscriber_state_history group by 1, 2, 3
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
  -- One read of the list for both the sources and the totals.
  list as materialized (
    select coalesce(nullif(source, ''), '(unknown)') as source, status as state, count(*)::int as n
    from public.email_signups group by 1, 2
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

do $$
begin
  revoke all on function public.prune_retained(integer) from public;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function public.prune_retained(integer) from anon;
    revoke all on public.email_event_counts from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on function public.prune_retained(integer) from authenticated;
    revoke all on public.email_event_counts from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant execute on function public.prune_retained(integer) to service_role;
    grant select on public.email_event_counts to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
