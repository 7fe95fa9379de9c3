-- The report at 100,000 subscribers and 800,000 ledger rows, four more parts made cheaper
-- (bench/RESULTS.md), with the same answer. Timed one by one on the report bench's data:
-- - The weekly states and signups came from a window over the whole state history sorted by
--   subscriber (150-270 ms, and ~100 ms more to sum its rows up by week). Each history row now also
--   names the state it left, so they come from one grouping of the history by week.
-- - Each recap's sent count and first and last send came from a scan of the whole ledger
--   (165-175 ms at 800,000 rows, and the ledger grows by the list's size every week: ten years of
--   a 100,000 list is 52 million rows). They are now kept per recap as ledger rows are written.
-- - Bounces and complaints were matched to recaps by a merge join that walked the ledger's message
--   index (75-112 ms for 2,000 events); each event now looks its message up in that index.
-- - The sources and the totals read the list once instead of twice (43-62 and 48-56 ms).
-- The whole function: 870-1,090 ms before, 150-230 ms after (psql, alternating, same data).
--
-- What a deletion does to the counts: the ledger rows of a deleted subscriber go (as
-- 20261124003010_subscriber_links.sql has it), but the recap's sent count keeps them, the way
-- bounce and complaint events keep their figures and the state history keeps past weeks. So a
-- deletion changes no figure of a recap already sent, and it never locks a recap's count: a
-- settling batch locks its batch row and then the count, while a deletion removes ledger rows
-- before it updates batch rows, so a deletion that decremented the count would take the two locks
-- in the opposite order and could deadlock with a settle.

create table if not exists public.digest_recap_sends (
  recap_date date primary key,
  sent integer not null check (sent >= 0),
  first_sent_at timestamptz not null,
  last_sent_at timestamptz not null
);
alter table public.digest_recap_sends enable row level security;

-- Statement-level with a transition table: a settled batch of 100 adds to one row once, not per
-- recipient. Security definer, as whoever may write the ledger may not write this table.
create or replace function public.count_digest_recap_sends()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'TRUNCATE' then
    delete from public.digest_recap_sends;
  else
    insert into public.digest_recap_sends as c (recap_date, sent, first_sent_at, last_sent_at)
    select n.recap_date, count(*), min(n.sent_at), max(n.sent_at) from new_rows n group by n.recap_date
    on conflict (recap_date) do update
      set sent = c.sent + excluded.sent,
          first_sent_at = least(c.first_sent_at, excluded.first_sent_at),
          last_sent_at = greatest(c.last_sent_at, excluded.last_sent_at);
  end if;
  return null;
end
$$;

drop trigger if exists digest_deliveries_count_insert on public.digest_deliveries;
create trigger digest_deliveries_count_insert after insert on public.digest_deliveries
  referencing new table as new_rows for each statement execute function public.count_digest_recap_sends();
drop trigger if exists digest_deliveries_count_truncate on public.digest_deliveries;
create trigger digest_deliveries_count_truncate after truncate on public.digest_deliveries
  for each statement execute function public.count_digest_recap_sends();

-- The ledger as it stands when this migration runs.
insert into public.digest_recap_sends (recap_date, sent, first_sent_at, last_sent_at)
select recap_date, count(*), min(sent_at), max(sent_at) from public.digest_deliveries group by recap_date
on conflict (recap_date) do nothing;

do $$
begin
  revoke all on function public.count_digest_recap_sends() from public;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on public.digest_recap_sends from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on public.digest_recap_sends from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant select on public.digest_recap_sends to service_role;
  end if;
end
$$;

-- Each history row also names the state it left (null for a subscriber's first row), so the
-- weekly chart is one grouping of the history instead of a window over it sorted by subscriber
-- (the window, its sort and the sums over its 119,230 rows were most of what the report had left).
alter table public.subscriber_state_history add column if not exists from_state text;

-- Rows written before this migration: the state of the row before, in the order the report read them.
update public.subscriber_state_history h set from_state = p.from_state
from (
  select id, lag(state) over (partition by subscriber_id order by changed_at, id) as from_state
  from public.subscriber_state_history
) p
where h.id = p.id and p.from_state is not null and h.from_state is null;

-- As in 20261123000400_email_events_and_state_history.sql, plus the state left, and the state read
-- from the status column (the generated column that is the state rule, which every table has had
-- since 20261123000100_subscriber_status.sql) instead of turning each signup's row into jsonb for
-- subscriber_state_of.
create or replace function public.record_subscriber_states()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    insert into public.subscriber_state_history (subscriber_id, state)
    select n.id::text, n.status from new_rows n;
  else
    insert into public.subscriber_state_history (subscriber_id, state, from_state)
    select n.id::text, n.status, o.status
    from new_rows n join old_rows o on o.id = n.id
    where n.status is distinct from o.status;
  end if;
  return null;
end;
$$;

-- As in 20261124003010_subscriber_links.sql, with the state the deleted subscriber left on its
-- 'deleted' row.
create or replace function public.forget_deleted_subscribers()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_ids text[];
  v_emails text[];
begin
  select array_agg(o.id::text), array_agg(o.email) into v_ids, v_emails from old_rows o;
  if v_ids is null then
    return null;
  end if;
  delete from public.digest_deliveries d where d.subscriber_id = any(v_ids);
  update public.email_events ev set subscriber_id = null where ev.subscriber_id = any(v_ids);
  -- Its mail still waiting is called off; what went out keeps its counts but not the id.
  update public.mail_outbox m
    set subscriber_id = null,
        state = case when m.state in ('queued', 'retrying') then 'cancelled' else m.state end,
        last_error = case when m.state in ('queued', 'retrying') then 'the subscriber was deleted before it went out' else null end,
        lease_until = null,
        payload = '{}'::jsonb
    where m.subscriber_id = any(v_ids);
  update public.digest_batches b
    set subscriber_ids = array(
          select case when m.id = any(v_ids) then 'deleted' else m.id end
          from unnest(b.subscriber_ids) with ordinality as m(id, n) order by m.n),
        failure = public.scrub_failure(b.failure, v_ids, v_emails)
    where b.subscriber_ids && v_ids;
  update public.digest_runs r set message = replace(r.message, a.email, '(deleted address)')
    from unnest(v_emails) as a(email) where strpos(r.message, a.email) > 0;
  with gone as materialized (
    select o.id::text as id, o.status as state, 'deleted:' || gen_random_uuid()::text as alias from old_rows o
  ),
  renamed as (
    update public.subscriber_state_history h set subscriber_id = g.alias from gone g where h.subscriber_id = g.id returning 1
  )
  insert into public.subscriber_state_history (subscriber_id, state, from_state) select g.alias, 'deleted', g.state from gone g;
  return null;
end
$$;

-- Otherwise as in 20261126003010_report_totals_from_status.sql; replacing the function keeps its
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
  attributed as materialized (
    select d.recap_date, e.event_type, count(distinct e.provider_message_id)::int as n
    from public.email_events e
    -- An index lookup per event: without the limit the planner walks the whole message index.
    cross join lateral (
      select l.recap_date from public.digest_deliveries l where l.provider_message_id = e.provider_message_id limit 1
    ) d
    where e.event_type in ('email.bounced', 'email.complained') and e.provider_message_id is not null
    group by d.recap_date, e.event_type
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
