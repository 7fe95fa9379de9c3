-- The durable outbox for every e-mail besides the digest's batches: confirmations, welcomes and
-- the operator's notices. A row is written in the same transaction as the change that promises
-- the e-mail (the triggers below fire inside the signup and activation functions' own statements),
-- and a worker (server/mail/outbox-worker.ts) claims due rows with FOR UPDATE SKIP LOCKED, sends
-- each under the provider idempotency key `outbox/<id>`, and settles it. A killed worker's claim
-- expires with its lease; a provider outage moves the row to `retrying` with a later
-- next_attempt_at. A table, not pg-boss or graphile-worker: both need a direct PostgreSQL
-- connection (graphile-worker LISTEN/NOTIFY, pg-boss its own schema maintenance), and the
-- Supabase store speaks only REST; these functions run the same on PGlite, PostgreSQL and rpc.

create table if not exists public.mail_outbox (
  id bigint generated always as identity primary key,
  kind text not null check (kind in ('confirm', 'welcome', 'operator')),
  -- email_signups.id as text (uuid on an old Supabase table, bigint on a fresh one); null for
  -- the operator's notices, whose address is in the payload.
  subscriber_id text,
  payload jsonb not null default '{}'::jsonb,
  state text not null default 'queued' check (state in ('queued', 'retrying', 'sent', 'failed', 'cancelled')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  -- Set while a worker holds the row; a worker killed mid-send leaves it to expire.
  lease_until timestamptz,
  last_error text,
  provider_id text,
  created_at timestamptz not null default now(),
  settled_at timestamptz
);
create index if not exists mail_outbox_due_idx on public.mail_outbox (next_attempt_at, id) where state in ('queued', 'retrying');
create index if not exists mail_outbox_created_idx on public.mail_outbox (created_at);

alter table public.mail_outbox enable row level security;

create or replace function public.outbox_enqueue(p_kind text, p_subscriber_id text, p_payload jsonb)
returns bigint
language sql
volatile
security invoker
set search_path = ''
as $$
  insert into public.mail_outbox (kind, subscriber_id, payload)
  values (p_kind, p_subscriber_id, coalesce(p_payload, '{}'::jsonb))
  returning id;
$$;

-- The promise and its e-mail in one transaction: whatever sets confirmation_sent_at (the signup
-- function's 24 h / 30 day throttle claim) queues a confirmation, and whatever sets welcomed_at
-- (the once-ever welcome claim) queues a welcome. Giving the throttle back (null) queues nothing.
create or replace function public.outbox_from_signup()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
begin
  if new.confirmation_sent_at is not null
     and (tg_op = 'INSERT' or old.confirmation_sent_at is distinct from new.confirmation_sent_at) then
    perform public.outbox_enqueue('confirm', new.id::text, '{}'::jsonb);
  end if;
  if new.welcomed_at is not null and (tg_op = 'INSERT' or old.welcomed_at is null) then
    perform public.outbox_enqueue('welcome', new.id::text, '{}'::jsonb);
  end if;
  return null;
end
$$;

drop trigger if exists email_signups_outbox_insert on public.email_signups;
create trigger email_signups_outbox_insert
  after insert on public.email_signups
  for each row when (new.confirmation_sent_at is not null or new.welcomed_at is not null)
  execute function public.outbox_from_signup();

drop trigger if exists email_signups_outbox_update on public.email_signups;
create trigger email_signups_outbox_update
  after update of confirmation_sent_at, welcomed_at on public.email_signups
  for each row when (
    (new.confirmation_sent_at is not null and new.confirmation_sent_at is distinct from old.confirmation_sent_at)
    or (new.welcomed_at is not null and old.welcomed_at is null)
  )
  execute function public.outbox_from_signup();

-- A signup that, with WELCOME_EMAIL=on, also claims the welcome of an address it made active,
-- in the same transaction (so the welcome's outbox row commits with the activation).
create or replace function public.signup_subscriber_welcome(
  p_email text, p_source text, p_mode text, p_network_hash text, p_address_hashes text[], p_welcome boolean
)
returns json
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_decision json;
begin
  v_decision := public.signup_subscriber(p_email, p_source, p_mode, p_network_hash, p_address_hashes);
  if p_welcome and v_decision->>'outcome' = 'subscribed' then
    update public.email_signups e set welcomed_at = now()
      where e.id::text = v_decision->>'id' and e.welcomed_at is null and e.status = 'active';
  end if;
  return v_decision;
end
$$;

-- The owner's confirmation or "Subscribe again", and (p_welcome) the welcome claim, in one transaction.
create or replace function public.activate_subscriber_welcome(
  p_id text, p_network_hash text, p_from text[], p_confirmation boolean, p_welcome boolean
)
returns json
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_activation json;
begin
  v_activation := public.activate_subscriber(p_id, p_network_hash, p_from, p_confirmation);
  if p_welcome and (v_activation->>'activated')::boolean then
    update public.email_signups e set welcomed_at = now()
      where e.id::text = p_id and e.welcomed_at is null and e.status = 'active';
  end if;
  return v_activation;
end
$$;

-- Up to p_limit due messages, each leased for p_lease_seconds and counted as one more attempt.
-- SKIP LOCKED: two workers (two replicas, or the server and a CLI) never claim the same row.
-- Each comes with its subscriber's address and state (null when the row was deleted since).
create or replace function public.outbox_claim(p_limit integer, p_lease_seconds integer)
returns jsonb
language sql
volatile
security invoker
set search_path = ''
as $$
  with due as (
    select m.id from public.mail_outbox m
    where m.state in ('queued', 'retrying') and m.next_attempt_at <= now()
      and (m.lease_until is null or m.lease_until < now())
    order by m.next_attempt_at, m.id
    limit p_limit
    for update skip locked
  ), claimed as (
    update public.mail_outbox m
      set lease_until = now() + make_interval(secs => p_lease_seconds), attempts = m.attempts + 1
      from due where m.id = due.id
      returning m.id, m.kind, m.subscriber_id, m.payload, m.attempts, m.created_at
  )
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', c.id, 'kind', c.kind, 'subscriber_id', c.subscriber_id, 'payload', c.payload,
    'attempts', c.attempts, 'created_at', c.created_at, 'email', e.email, 'status', e.status
  ) order by c.id), '[]'::jsonb)
  from claimed c left join public.email_signups e on e.id::text = c.subscriber_id;
$$;

-- Closes (sent, failed, cancelled) or postpones (retrying, after p_retry_seconds) a claimed
-- message; false when it was not open. A confirmation that will never be sent gives back the
-- throttle it held, so the reader's next signup sends one instead of waiting out the day.
create or replace function public.outbox_settle(p_id bigint, p_state text, p_error text, p_retry_seconds integer, p_provider_id text)
returns boolean
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_kind text;
  v_subscriber text;
  v_created timestamptz;
begin
  if p_state not in ('sent', 'retrying', 'failed', 'cancelled') then
    raise exception 'outbox state must be sent, retrying, failed or cancelled, not %', p_state using errcode = '22023';
  end if;
  update public.mail_outbox m
    set state = p_state,
        lease_until = null,
        last_error = case when p_state = 'sent' then m.last_error else p_error end,
        provider_id = case when p_state = 'sent' then p_provider_id else m.provider_id end,
        next_attempt_at = case when p_state = 'retrying' then now() + make_interval(secs => greatest(0, coalesce(p_retry_seconds, 0))) else m.next_attempt_at end,
        settled_at = case when p_state = 'retrying' then null else now() end
    where m.id = p_id and m.state in ('queued', 'retrying')
    returning m.kind, m.subscriber_id, m.created_at into v_kind, v_subscriber, v_created;
  if v_kind is null then
    return false;
  end if;
  if v_kind = 'confirm' and p_state in ('failed', 'cancelled') then
    update public.email_signups e set confirmation_sent_at = null
      where e.id::text = v_subscriber and e.confirmation_sent_at <= v_created;
  end if;
  return true;
end
$$;

-- What the report and --history show: messages of the last p_days days by state, the oldest one
-- still open, and the latest failures with their reasons.
create or replace function public.outbox_recent(p_days integer)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  with recent as (
    select * from public.mail_outbox m where m.created_at >= now() - make_interval(days => p_days)
  )
  select jsonb_build_object(
    'days', p_days,
    'queued', (select count(*) from recent where state = 'queued'),
    'retrying', (select count(*) from recent where state = 'retrying'),
    'failed', (select count(*) from recent where state = 'failed'),
    'sent', (select count(*) from recent where state = 'sent'),
    'oldest_open_at', (select min(created_at) from recent where state in ('queued', 'retrying')),
    'failures', coalesce((
      select jsonb_agg(jsonb_build_object('id', f.id, 'kind', f.kind, 'created_at', f.created_at, 'attempts', f.attempts, 'last_error', f.last_error) order by f.created_at desc)
      from (select * from recent where state in ('failed', 'retrying') order by created_at desc limit 10) f
    ), '[]'::jsonb)
  );
$$;

do $$
declare
  fn text;
  functions text[] := array[
    'public.outbox_enqueue(text, text, jsonb)',
    'public.outbox_from_signup()',
    'public.signup_subscriber_welcome(text, text, text, text, text[], boolean)',
    'public.activate_subscriber_welcome(text, text, text[], boolean, boolean)',
    'public.outbox_claim(integer, integer)',
    'public.outbox_settle(bigint, text, text, integer, text)',
    'public.outbox_recent(integer)'];
begin
  foreach fn in array functions loop
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
    revoke all on public.mail_outbox from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on public.mail_outbox from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant select, insert, update on public.mail_outbox to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
