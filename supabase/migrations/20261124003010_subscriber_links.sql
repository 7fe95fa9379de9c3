-- Links with a purpose, a version and a single use (server/link-tokens.ts), and a delete that
-- leaves no row naming the subscriber.
--
-- link_version: part of every fresh link (download, delete, subscribe again). It goes up whenever
-- the row's state changes, so a link made before the address left or came back does not act after.
alter table public.email_signups add column if not exists link_version integer not null default 1;

create or replace function public.email_signups_bump_link_version()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if new.unsubscribed_at is distinct from old.unsubscribed_at
     or new.unsubscribe_reason is distinct from old.unsubscribe_reason
     or new.pending_since is distinct from old.pending_since then
    new.link_version := old.link_version + 1;
  end if;
  return new;
end
$$;

drop trigger if exists email_signups_bump_link_version on public.email_signups;
create trigger email_signups_bump_link_version
  before update of unsubscribed_at, unsubscribe_reason, pending_since on public.email_signups
  for each row execute function public.email_signups_bump_link_version();

-- The nonces of fresh links that were used: one row per use, naming no one. Kept a day past the
-- link's expiry (after which the link is refused by its own clock anyway), then cleared by the
-- next use.
create table if not exists public.subscriber_link_uses (
  nonce text primary key,
  used_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index if not exists subscriber_link_uses_expires_idx on public.subscriber_link_uses (expires_at);
alter table public.subscriber_link_uses enable row level security;

-- What a fresh link is made for: {email, status, link_version}, or null when there is no such row.
create or replace function public.subscriber_link_target(p_id text)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select jsonb_build_object('email', e.email, 'status', e.status, 'link_version', e.link_version)
  from public.email_signups e where e.id::text = p_id;
$$;

-- Whether a fresh link could act now, without using it (its page, opened by a GET):
-- 'ok', 'used', 'revoked' (the state changed since it was made) or 'gone' (no such subscriber).
create or replace function public.subscriber_link_state(p_id text, p_version integer, p_nonce text)
returns text
language sql
stable
security invoker
set search_path = ''
as $$
  select case
    when e.id is null then 'gone'
    when exists (select 1 from public.subscriber_link_uses u where u.nonce = p_nonce) then 'used'
    when e.link_version <> p_version then 'revoked'
    else 'ok'
  end
  from (select 1) one left join public.email_signups e on e.id::text = p_id;
$$;

-- Uses a fresh link: the same checks under the row's lock, then its nonce is recorded, so a second
-- use (or a race of two) finds it used. Returns the same words as subscriber_link_state.
create or replace function public.use_subscriber_link(p_id text, p_version integer, p_nonce text, p_expires_at timestamptz)
returns text
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_version integer;
begin
  select e.link_version into v_version from public.email_signups e where e.id::text = p_id for update;
  if v_version is null then
    return 'gone';
  end if;
  if exists (select 1 from public.subscriber_link_uses u where u.nonce = p_nonce) then
    return 'used';
  end if;
  if v_version <> p_version then
    return 'revoked';
  end if;
  insert into public.subscriber_link_uses (nonce, expires_at) values (p_nonce, p_expires_at) on conflict (nonce) do nothing;
  if not found then
    return 'used';
  end if;
  delete from public.subscriber_link_uses u where u.expires_at < now() - interval '1 day';
  return 'ok';
end
$$;

-- A fresh link goes out through the durable mail outbox (20261124002000_mail_outbox.sql) as a row
-- of kind 'link': its payload is what the link is made of (purpose, the link version now, nonce,
-- expiry), so every try of the worker composes the same message, and it names no one.
alter table public.mail_outbox drop constraint if exists mail_outbox_kind_check;
alter table public.mail_outbox add constraint mail_outbox_kind_check check (kind in ('confirm', 'welcome', 'operator', 'link'));
-- A delete finds the subscriber's mail through this index.
create index if not exists mail_outbox_subscriber_idx on public.mail_outbox (subscriber_id) where subscriber_id is not null;

-- Queues a fresh link for this subscriber; false when there is no such subscriber.
create or replace function public.request_subscriber_link(p_id text, p_purpose text, p_nonce text, p_expires_at timestamptz)
returns boolean
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_version integer;
begin
  if p_purpose not in ('download', 'delete', 'resubscribe') then
    raise exception 'link purpose must be download, delete or resubscribe, not %', p_purpose using errcode = '22023';
  end if;
  select e.link_version into v_version from public.email_signups e where e.id::text = p_id for share;
  if v_version is null then
    return false;
  end if;
  perform public.outbox_enqueue('link', p_id, jsonb_build_object('purpose', p_purpose, 'version', v_version, 'nonce', p_nonce, 'expires_at', p_expires_at));
  return true;
end
$$;

-- "Delete my data": the row goes, and with it (trigger below) every row that names it. A keyed
-- hash of the address stays on the suppression list only if it had bounced or complained.
-- Returns the state it had, or null.
create or replace function public.delete_subscriber(p_id text, p_address_hash text)
returns text
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_status text;
begin
  delete from public.email_signups e where e.id::text = p_id returning e.status into v_status;
  if v_status is null then
    return null;
  end if;
  if v_status in ('bounced', 'complained') then
    insert into public.subscriber_suppressions (address_hash, reason) values (p_address_hash, v_status)
      on conflict (address_hash) do update set reason = excluded.reason
      where public.subscriber_suppressions.reason <> 'complained';
  end if;
  return v_status;
end
$$;

-- The delete a fresh "Delete my data" link makes: used and deleted in one transaction, so a
-- failure leaves the link unused. Returns {outcome, status}: outcome as use_subscriber_link,
-- status the state the row had when it was deleted.
create or replace function public.delete_subscriber_by_link(p_id text, p_version integer, p_nonce text, p_expires_at timestamptz, p_address_hash text)
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_outcome text;
begin
  v_outcome := public.use_subscriber_link(p_id, p_version, p_nonce, p_expires_at);
  if v_outcome <> 'ok' then
    return jsonb_build_object('outcome', v_outcome, 'status', null);
  end if;
  return jsonb_build_object('outcome', 'ok', 'status', public.delete_subscriber(p_id, p_address_hash));
end
$$;

-- The delete below finds the batches naming an id through this index, not by reading every batch.
create index if not exists digest_batches_subscriber_ids_idx on public.digest_batches using gin (subscriber_ids);

-- A batch's failure with every mention of these ids and addresses (as they appear in its JSON
-- text) replaced by 'deleted'.
create or replace function public.scrub_failure(p_failure jsonb, p_ids text[], p_emails text[])
returns jsonb
language plpgsql
immutable
set search_path = ''
as $$
declare
  v_text text;
  v_needle text;
begin
  if p_failure is null then
    return null;
  end if;
  v_text := p_failure::text;
  foreach v_needle in array coalesce(p_ids, '{}') || coalesce(p_emails, '{}') loop
    if v_needle <> '' then
      v_text := replace(v_text, trim(both '"' from to_jsonb(v_needle)::text), 'deleted');
    end if;
  end loop;
  return v_text::jsonb;
end
$$;

-- Whatever deletes subscribers (their own delete, the prune of stale pending signups, an operator's
-- DELETE), no row keeps naming them: the ledger rows go; bounce and complaint events keep their
-- figures but lose the id; batches keep their shape with 'deleted' in the id's place (a batch
-- settled later writes no ledger row for it, and a resend reports it deleted); run messages lose
-- the address. The state history keeps the figures of past weeks under an alias that names no one,
-- and ends with a 'deleted' row, so the report stops counting the subscriber from that week on.
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
    select id, 'deleted:' || gen_random_uuid()::text as alias from unnest(v_ids) as g(id)
  ),
  renamed as (
    update public.subscriber_state_history h set subscriber_id = g.alias from gone g where h.subscriber_id = g.id returning 1
  )
  insert into public.subscriber_state_history (subscriber_id, state) select g.alias, 'deleted' from gone g;
  return null;
end
$$;

drop trigger if exists email_signups_forget_deleted on public.email_signups;
create trigger email_signups_forget_deleted after delete on public.email_signups
  referencing old table as old_rows for each statement execute function public.forget_deleted_subscribers();

-- The report: a deleted (or pruned) subscriber counts until the week it went, and its signup stays
-- in the week it happened. Otherwise as in 20261123000410_report_snapshot_function.sql.
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
  spans as (
    select s.state, s.since, s.until from (
      select state, changed_at as since,
             lead(changed_at) over (partition by subscriber_id order by changed_at, id) as until
      from public.subscriber_state_history
    ) s
    where s.state <> 'deleted'
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
    select date_trunc('week', f.first_at) as week_start, count(*)::int as n
    from (select min(changed_at) as first_at from public.subscriber_state_history group by subscriber_id) f, bounds b
    where f.first_at >= b.first_week
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
    select public.subscriber_state_of(to_jsonb(e)) as state, count(*)::int as n from public.email_signups e group by 1
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


-- Settling a batch writes no ledger row in the place of a deleted recipient. Otherwise as in
-- 20261123000300_digest_batches.sql.
create or replace function public.digest_settle_batch(
  p_id bigint, p_state text, p_accepted jsonb, p_failure jsonb, p_settled_at timestamptz)
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  closed public.digest_batches;
begin
  if p_state not in ('sent', 'failed', 'skipped') then
    raise exception 'digest_settle_batch: state must be sent, failed or skipped, not %', p_state using errcode = '22023';
  end if;
  update public.digest_batches b
     set state = p_state,
         provider_ids = case when p_state = 'sent' then array(
           select (select a ->> 'provider_id' from jsonb_array_elements(p_accepted) a where a ->> 'id' = m.id limit 1)
           from unnest(b.subscriber_ids) with ordinality as m(id, n) order by m.n) end,
         -- A recipient deleted since the batch was written ('deleted' in its place) is not named,
         -- nor is the provider's reason for it repeated.
         failure = case when jsonb_typeof(p_failure -> 'recipients') = 'array' then jsonb_set(p_failure, '{recipients}', (
           select coalesce(jsonb_agg(case when r ->> 'id' = any(b.subscriber_ids) then r else jsonb_build_object('id', 'deleted', 'reason', 'deleted') end order by k), '[]'::jsonb)
           from jsonb_array_elements(p_failure -> 'recipients') with ordinality as x(r, k))) else p_failure end,
         settled_at = p_settled_at
   where b.id = p_id and b.state in ('pending', 'unknown')
   returning * into closed;
  if not found then
    return to_jsonb(false);
  end if;
  insert into public.digest_deliveries (recap_date, subscriber_id, provider_message_id, sent_at)
  select closed.recap_date, m.id, a.provider_id, p_settled_at
  from unnest(closed.subscriber_ids) as m(id)
  left join (
    select e ->> 'id' as id, e ->> 'provider_id' as provider_id from jsonb_array_elements(coalesce(p_accepted, '[]'::jsonb)) e
  ) a on a.id = m.id
  where m.id <> 'deleted' and (p_state = 'skipped' or (p_state = 'sent' and a.id is not null))
  on conflict (recap_date, subscriber_id) do nothing;
  return to_jsonb(true);
end
$$;

-- Only the server's own role may call these or read the nonces.
do $$
declare
  fn text;
  fns text[] := array[
    'public.subscriber_link_target(text)',
    'public.subscriber_link_state(text, integer, text)',
    'public.use_subscriber_link(text, integer, text, timestamptz)',
    'public.delete_subscriber(text, text)',
    'public.delete_subscriber_by_link(text, integer, text, timestamptz, text)',
    'public.report_snapshot(integer)',
    'public.digest_settle_batch(bigint, text, jsonb, jsonb, timestamptz)',
    'public.scrub_failure(jsonb, text[], text[])',
    'public.request_subscriber_link(text, text, text, timestamptz)'
  ];
begin
  revoke all on function public.email_signups_bump_link_version() from public;
  revoke all on function public.forget_deleted_subscribers() from public;
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
    revoke all on public.subscriber_link_uses from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on public.subscriber_link_uses from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant select, insert, delete on public.subscriber_link_uses to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
