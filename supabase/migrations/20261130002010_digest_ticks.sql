-- The record of DIGEST_CRON ticks: one row per tick instant, made in the same transaction as the
-- run that serves it, so "was this tick run" is one keyed read and a claim can never exist without
-- its run. The holder renews its lease while it runs (or waits to try again); a holder that dies
-- stops renewing, and once the lease has passed another server (or the next start) takes the tick
-- over with a run of its own. A tick past its catch-up deadline is recorded as 'missed' by the one
-- server that tells the operator, so it is told once.
create table if not exists public.digest_ticks (
  tick timestamptz primary key,
  holder text not null,
  state text not null check (state in ('running', 'done', 'missed', 'abandoned')),
  late boolean not null default false,
  run_id bigint references public.digest_runs (id) on delete set null,
  recap_date date,
  claimed_at timestamptz not null,
  lease_until timestamptz not null
);
alter table public.digest_ticks enable row level security;

-- The claims of the earlier scheme were each dealt with (run or told): kept as done.
insert into public.digest_ticks (tick, holder, state, claimed_at, lease_until)
  select c.tick, c.holder, 'done', c.claimed_at, c.claimed_at from public.digest_tick_claims c
  on conflict (tick) do nothing;

-- Claims the tick (new, still this holder's, or another holder's whose lease has passed) and starts
-- a scheduled run for it, in one transaction. Null when another holder's lease is valid or the tick
-- is settled; otherwise {run_id, late, taken_over}.
create or replace function public.digest_begin_tick(p_tick timestamptz, p_holder text, p_now timestamptz, p_lease_ms integer, p_late boolean)
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_until timestamptz := p_now + make_interval(secs => p_lease_ms / 1000.0);
  v_late boolean;
  v_previous text;
  v_run bigint;
begin
  insert into public.digest_ticks as t (tick, holder, state, late, claimed_at, lease_until)
    values (p_tick, p_holder, 'running', p_late, p_now, v_until)
    on conflict (tick) do nothing
    returning t.late into v_late;
  if found then
    v_previous := p_holder;
  else
    select t.holder into v_previous from public.digest_ticks t
      where t.tick = p_tick and t.state = 'running' and (t.holder = p_holder or t.lease_until < p_now)
      for update;
    if not found then
      return null;
    end if;
    update public.digest_ticks t set holder = p_holder, lease_until = v_until
      where t.tick = p_tick
      returning t.late into v_late;
  end if;
  insert into public.digest_runs (kind, started_at) values ('scheduled', p_now) returning id into v_run;
  update public.digest_ticks t set run_id = v_run where t.tick = p_tick;
  return jsonb_build_object('run_id', v_run::text, 'late', v_late, 'taken_over', v_previous <> p_holder);
end
$$;

-- Keeps the holder's claim until p_until (a long run, or a pause before the next try).
create or replace function public.digest_renew_tick(p_tick timestamptz, p_holder text, p_until timestamptz)
returns boolean
language sql
volatile
security invoker
set search_path = ''
as $$
  with renewed as (
    update public.digest_ticks t set lease_until = p_until
      where t.tick = p_tick and t.holder = p_holder and t.state = 'running'
      returning 1
  )
  select exists (select 1 from renewed);
$$;

-- Settles a running tick, the holder's or one whose holder's lease has passed: done (sent, or
-- nothing left to do), missed (past its deadline) or abandoned (a newer tick took over its week).
-- True for the one caller that settled it (and tells it).
create or replace function public.digest_end_tick(p_tick timestamptz, p_holder text, p_now timestamptz, p_state text, p_recap_date date)
returns boolean
language sql
volatile
security invoker
set search_path = ''
as $$
  with ended as (
    update public.digest_ticks t set state = p_state, holder = p_holder, recap_date = coalesce(p_recap_date, t.recap_date)
      where t.tick = p_tick and (t.holder = p_holder or t.lease_until < p_now) and t.state = 'running' and p_state in ('done', 'missed', 'abandoned')
      returning 1
  )
  select exists (select 1 from ended);
$$;

-- Records a tick nobody ran as missed; true for the one caller that records it (and tells it).
create or replace function public.digest_record_missed_tick(p_tick timestamptz, p_holder text, p_now timestamptz)
returns boolean
language sql
volatile
security invoker
set search_path = ''
as $$
  with recorded as (
    insert into public.digest_ticks (tick, holder, state, claimed_at, lease_until)
      values (p_tick, p_holder, 'missed', p_now, p_now)
      on conflict (tick) do nothing
    returning 1
  )
  select exists (select 1 from recorded);
$$;

-- The ticks at or after p_since, newest first, each with its latest run's outcome.
create or replace function public.digest_ticks_since(p_since timestamptz)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'tick', t.tick, 'holder', t.holder, 'state', t.state, 'late', t.late, 'run_id', t.run_id::text,
    'recap_date', t.recap_date, 'lease_until', t.lease_until, 'outcome', r.outcome
  ) order by t.tick desc), '[]'::jsonb)
  from public.digest_ticks t
  left join public.digest_runs r on r.id = t.run_id
  where t.tick >= p_since;
$$;

-- Bounded prunes for the daily housekeeping: each call deletes at most p_limit rows of each kind,
-- so a backlog goes in short transactions (looped by the caller) that replicas cannot deadlock in.
create or replace function public.prune_pending_subscribers_batch(p_days integer, p_limit integer)
returns integer
language sql
volatile
security invoker
set search_path = ''
as $$
  with gone as (
    delete from public.email_signups e
    where e.ctid in (
      select s.ctid from public.email_signups s
      where s.pending_since is not null
        and s.pending_since < now() - make_interval(days => p_days)
        and coalesce(s.confirmation_sent_at, s.pending_since) < now() - make_interval(days => p_days)
      limit greatest(p_limit, 1)
    )
    returning 1
  ),
  forgotten as (
    delete from public.mailbox_confirmations m
    where m.ctid in (select c.ctid from public.mailbox_confirmations c where c.sent_at < now() - interval '30 days' limit greatest(p_limit, 1))
    returning 1
  )
  select count(*)::int from gone;
$$;

-- As prune_retained (20261128008020_retention.sql), at most p_limit outbox rows and p_limit event
-- groups per call.
create or replace function public.prune_retained_batch(p_days integer, p_limit integer)
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
    where m.ctid in (
      select o.ctid from public.mail_outbox o
      where o.created_at < v_cutoff and o.state in ('sent', 'failed', 'cancelled', 'unknown')
      limit greatest(p_limit, 1)
    );
  get diagnostics v_outbox = row_count;

  with old_groups as (
    select e.provider_message_id, e.event_type
    from public.email_events e
    where e.provider_message_id is not null and e.received_at < v_cutoff
    group by e.provider_message_id, e.event_type
    having max(e.received_at) < v_cutoff
       and not exists (
         select 1 from public.email_events n
         where n.provider_message_id = e.provider_message_id and n.event_type = e.event_type and n.received_at >= v_cutoff
       )
    limit greatest(p_limit, 1)
  ),
  loose as (
    select e.ctid from public.email_events e
    where e.provider_message_id is null and e.received_at < v_cutoff
    limit greatest(p_limit, 1)
  ),
  gone as (
    delete from public.email_events e
    where e.ctid in (select l.ctid from loose l)
       or (e.received_at < v_cutoff and exists (select 1 from old_groups g where g.provider_message_id = e.provider_message_id and g.event_type = e.event_type))
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

do $$
declare
  f text;
begin
  foreach f in array array[
    'public.digest_begin_tick(timestamptz, text, timestamptz, integer, boolean)',
    'public.digest_renew_tick(timestamptz, text, timestamptz)',
    'public.digest_end_tick(timestamptz, text, timestamptz, text, date)',
    'public.digest_record_missed_tick(timestamptz, text, timestamptz)',
    'public.digest_ticks_since(timestamptz)',
    'public.prune_pending_subscribers_batch(integer, integer)',
    'public.prune_retained_batch(integer, integer)'
  ] loop
    execute format('revoke all on function %s from public', f);
    if exists (select 1 from pg_roles where rolname = 'anon') then
      execute format('revoke all on function %s from anon', f);
    end if;
    if exists (select 1 from pg_roles where rolname = 'authenticated') then
      execute format('revoke all on function %s from authenticated', f);
    end if;
    if exists (select 1 from pg_roles where rolname = 'service_role') then
      execute format('grant execute on function %s to service_role', f);
    end if;
  end loop;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on public.digest_ticks from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on public.digest_ticks from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant select, insert, update on public.digest_ticks to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';

-- The sending lease on the caller's clock, for a scheduler run on a clock of its own (a test's or
-- the simulation's manual clock); the server on the system clock keeps acquire_digest_lock and the
-- database's now(), so replicas on hosts whose clocks differ still agree.
create or replace function public.acquire_digest_lock_at(p_recap_date date, p_holder text, p_lease_ms integer, p_now timestamptz)
returns boolean
language sql
volatile
security invoker
set search_path = ''
as $$
  with taken as (
    insert into public.digest_locks (recap_date, holder, locked_until)
    values (p_recap_date, p_holder, p_now + (p_lease_ms * interval '1 millisecond'))
    on conflict (recap_date) do update
      set holder = excluded.holder, locked_until = excluded.locked_until
      where public.digest_locks.holder = excluded.holder or public.digest_locks.locked_until < p_now
    returning 1
  )
  select exists (select 1 from taken);
$$;

do $$
begin
  revoke all on function public.acquire_digest_lock_at(date, text, integer, timestamptz) from public;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function public.acquire_digest_lock_at(date, text, integer, timestamptz) from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on function public.acquire_digest_lock_at(date, text, integer, timestamptz) from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant execute on function public.acquire_digest_lock_at(date, text, integer, timestamptz) to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
