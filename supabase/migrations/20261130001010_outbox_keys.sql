-- Outbox messages keep their promise past the provider's memory, and across restores.
--
-- Keys: a message was keyed `outbox/<id>` from a sequence, so a restored backup, a reset embedded
-- database or a staging copy on the same Resend account reused keys the provider still held (24 h):
-- it answered 409 (settled unknown, never sent) or replayed a cached 200 (marked sent, never sent).
-- Now each message carries a random key_id, and its key is `outbox/<key_id>/<key_generation>`.
--
-- Generations: the provider forgets a key 24 h after its first use, and a repeat after that could
-- be a second copy. A message whose tries were all surely refused (the sender refused, a clear
-- error answer, handed back untried) cannot have gone out, so when its key is about to expire the
-- claim gives it the next generation, a fresh key, and it keeps going, held as long as it takes.
-- A message with a try of uncertain outcome (no answer, a timeout, a claim never settled) is
-- handed to the worker marked key_expired instead, and settled unknown: told, never a copy.
--
-- Claim tokens: each claim writes a fresh claim_token and returns it; settling needs it, so a
-- worker whose lease ran out (and whose message another worker claimed since) changes nothing.
--
-- Clock: claim and settle take the caller's time (p_now; null means the database's), so one
-- clock rules retries and key lives, the one the worker and the tests move.
--
-- The sender hold: while the provider refuses the sender itself, the one row of mail_sender_hold
-- says since when and why (a refused key or a used-up quota); the report shows it, and the worker
-- tells the operator once per hold, whichever process saw the refusal first.

alter table public.mail_outbox add column if not exists key_id uuid not null default gen_random_uuid();
alter table public.mail_outbox add column if not exists key_generation integer not null default 1;
alter table public.mail_outbox add column if not exists key_since timestamptz;
alter table public.mail_outbox add column if not exists uncertain boolean not null default false;
alter table public.mail_outbox add column if not exists claim_token uuid;

create table if not exists public.mail_sender_hold (
  singleton boolean primary key default true check (singleton),
  cause text not null check (cause in ('key', 'quota')),
  reason text not null,
  since timestamptz not null,
  last_refused_at timestamptz not null
);
alter table public.mail_sender_hold enable row level security;

drop function if exists public.outbox_claim(integer, integer);
drop function if exists public.outbox_settle(bigint, text, text, integer, text);

create or replace function public.outbox_claim(p_limit integer, p_lease_seconds integer, p_key_seconds integer, p_now timestamptz)
returns jsonb
language sql
volatile
security invoker
set search_path = ''
as $$
  with clock as (
    select coalesce(p_now, now()) as at
  ), due as (
    select m.id,
      -- A claim never settled (its worker died or lost the database): its try may have gone out.
      m.uncertain or m.claim_token is not null as uncertain,
      m.key_since is not null and m.key_since <= clock.at - make_interval(secs => p_key_seconds) as key_old
    from public.mail_outbox m, clock
    -- A message never tried is due from when it was queued, on the database's own clock (its
    -- queueing functions know no other), however the worker's clock (another host's, or a test's)
    -- stands; its retries then wait on the worker's clock, which set them.
    where m.state in ('queued', 'retrying')
      and (m.next_attempt_at <= clock.at or (m.attempts = 0 and m.next_attempt_at <= now()))
      and (m.lease_until is null or m.lease_until < clock.at)
    order by m.next_attempt_at, m.id
    limit p_limit
    for update of m skip locked
  ), claimed as (
    update public.mail_outbox m
      set lease_until = clock.at + make_interval(secs => p_lease_seconds),
          attempts = m.attempts + 1,
          claim_token = gen_random_uuid(),
          uncertain = due.uncertain,
          key_generation = case when due.key_old and not due.uncertain then m.key_generation + 1 else m.key_generation end,
          key_since = case when m.key_since is null or (due.key_old and not due.uncertain) then clock.at else m.key_since end
      from due, clock where m.id = due.id
      returning m.id, m.kind, m.subscriber_id, m.payload, m.attempts, m.created_at, m.claim_token, m.key_id,
        m.key_generation, m.uncertain, due.key_old and due.uncertain as key_expired
  )
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', c.id, 'kind', c.kind, 'subscriber_id', c.subscriber_id, 'payload', c.payload,
    'attempts', c.attempts, 'created_at', c.created_at, 'email', e.email, 'status', e.status,
    'claim', c.claim_token, 'key', 'outbox/' || c.key_id::text || '/' || c.key_generation::text,
    'uncertain', c.uncertain, 'key_expired', c.key_expired
  ) order by c.id), '[]'::jsonb)
  from claimed c left join public.email_signups e on e.id::text = c.subscriber_id;
$$;

-- As in 20261128008010_outbox_unknown.sql, but only under the claim's own token, on the caller's
-- clock, and remembering whether this try's outcome is uncertain.
create or replace function public.outbox_settle(p_id bigint, p_claim uuid, p_state text, p_error text, p_retry_seconds integer, p_provider_id text, p_uncertain boolean, p_now timestamptz)
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
  v_released integer;
  v_at timestamptz := coalesce(p_now, now());
begin
  if p_state not in ('sent', 'retrying', 'failed', 'cancelled', 'unknown') then
    raise exception 'outbox state must be sent, retrying, failed, cancelled or unknown, not %', p_state using errcode = '22023';
  end if;
  update public.mail_outbox m
    set state = p_state,
        lease_until = null,
        claim_token = null,
        uncertain = m.uncertain or coalesce(p_uncertain, false),
        last_error = case when p_state = 'sent' then m.last_error else p_error end,
        provider_id = case when p_state = 'sent' then p_provider_id else m.provider_id end,
        next_attempt_at = case when p_state = 'retrying' then v_at + make_interval(secs => greatest(0, coalesce(p_retry_seconds, 0))) else m.next_attempt_at end,
        settled_at = case when p_state = 'retrying' then null else v_at end
    where m.id = p_id and m.claim_token = p_claim and m.state in ('queued', 'retrying')
    returning m.kind, m.subscriber_id, m.created_at into v_kind, v_subscriber, v_created;
  if v_kind is null then
    return false;
  end if;
  if v_kind = 'confirm' and p_state in ('failed', 'cancelled') then
    update public.email_signups e set confirmation_sent_at = null
      where e.id::text = v_subscriber and e.confirmation_sent_at = v_created;
    get diagnostics v_released = row_count;
    if v_released > 0 and to_regclass('public.mailbox_confirmations') is not null then
      execute 'delete from public.mailbox_confirmations m where m.sent_at = $1' using v_created;
    end if;
  end if;
  return true;
end
$$;

-- Records that the provider refuses the sender. True when this begins a hold, or changes its
-- cause (a quota used up after a key was fixed): the caller tells the operator then, and only then.
create or replace function public.outbox_hold_sender(p_cause text, p_reason text, p_now timestamptz)
returns boolean
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_at timestamptz := coalesce(p_now, now());
  v_cause text;
begin
  insert into public.mail_sender_hold (cause, reason, since, last_refused_at)
    values (p_cause, left(p_reason, 500), v_at, v_at)
    on conflict (singleton) do nothing;
  if found then
    return true;
  end if;
  select h.cause into v_cause from public.mail_sender_hold h for update;
  update public.mail_sender_hold h
    set reason = left(p_reason, 500), last_refused_at = v_at, cause = p_cause,
        since = case when h.cause = p_cause then h.since else v_at end;
  return v_cause is distinct from p_cause;
end
$$;

-- Ends the hold once the provider accepts mail again; answers the hold that ended, or null.
create or replace function public.outbox_release_sender()
returns jsonb
language sql
volatile
security invoker
set search_path = ''
as $$
  with released as (delete from public.mail_sender_hold returning cause, reason, since)
  select to_jsonb(r) from released r;
$$;

-- As in 20261128008010_outbox_unknown.sql, plus the sender hold, if any.
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
    'unknown', (select count(*) from recent where state = 'unknown'),
    'oldest_open_at', (select min(created_at) from recent where state in ('queued', 'retrying')),
    'failures', coalesce((
      select jsonb_agg(jsonb_build_object('id', f.id, 'kind', f.kind, 'state', f.state, 'created_at', f.created_at, 'attempts', f.attempts, 'last_error', f.last_error) order by f.created_at desc)
      from (select * from recent where state in ('failed', 'retrying', 'unknown') order by created_at desc limit 10) f
    ), '[]'::jsonb),
    'hold', (select jsonb_build_object('cause', h.cause, 'reason', h.reason, 'since', h.since, 'last_refused_at', h.last_refused_at) from public.mail_sender_hold h)
  );
$$;

do $$
declare
  fn text;
  functions text[] := array[
    'public.outbox_claim(integer, integer, integer, timestamptz)',
    'public.outbox_settle(bigint, uuid, text, text, integer, text, boolean, timestamptz)',
    'public.outbox_hold_sender(text, text, timestamptz)',
    'public.outbox_release_sender()',
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
    revoke all on public.mail_sender_hold from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on public.mail_sender_hold from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant select, insert, update, delete on public.mail_sender_hold to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
