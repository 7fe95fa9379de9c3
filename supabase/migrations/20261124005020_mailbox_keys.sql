-- Limits per mailbox, and a suppression list that survives any number of
-- rotations of UNSUBSCRIBE_SECRET.
--
-- The server computes, for every address, the keyed hash of its MAILBOX (server/mailbox-key.ts:
-- lower-cased, +tag dropped, Gmail dots dropped, googlemail.com read as gmail.com) under a key
-- that is created once and kept here (app_keys), never rotated with the link secret. It travels
-- as the FIRST element of p_address_hashes; the others are the hashes the suppression list used
-- before (of the exact address, under the current and previous UNSUBSCRIBE_SECRET), matched
-- during the transition and re-keyed to the mailbox hash the first time they match.

-- Keys the server creates once and keeps. Only the server's own role reads them.
create table if not exists public.app_keys (
  name text primary key,
  secret text not null check (length(secret) >= 32),
  created_at timestamptz not null default now()
);
alter table public.app_keys enable row level security;

-- The key of the mailbox hashes: the one stored, or p_candidate (fresh random bytes from the
-- server) when there is none yet. Two servers starting together both get the first one written.
create or replace function public.mailbox_hash_key(p_candidate text)
returns text
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_secret text;
begin
  insert into public.app_keys (name, secret) values ('mailbox hash', p_candidate) on conflict (name) do nothing;
  select k.secret into v_secret from public.app_keys k where k.name = 'mailbox hash';
  return v_secret;
end
$$;

-- When each mailbox (by its keyed hash) was last sent a confirmation e-mail: one per 24 hours per
-- mailbox, however it is spelled (30 days when the address is bounced or complained). Rows older
-- than 30 days say nothing any more; Monday's prune removes them.
create table if not exists public.mailbox_confirmations (
  mailbox_hash text primary key,
  sent_at timestamptz not null
);
alter table public.mailbox_confirmations enable row level security;

-- The signup (see 20261123000110_subscriber_functions.sql for the outcomes), now with the
-- suppression list looked up by mailbox, old hashes re-keyed, and the confirmation throttled per
-- mailbox as well as per row.
create or replace function public.signup_subscriber(
  p_email text, p_source text, p_mode text, p_network_hash text, p_address_hashes text[]
)
returns json
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_mailbox text := p_address_hashes[1];
  v_id text;
  v_status text;
  v_suppressed text;
  v_throttle interval;
  v_due boolean;
  v_inserted boolean;
begin
  if p_mode not in ('single', 'double') then
    raise exception 'signup mode must be single or double, not %', p_mode using errcode = '22023';
  end if;
  select s.reason into v_suppressed
    from public.subscriber_suppressions s
    where s.address_hash = any(coalesce(p_address_hashes, '{}'))
    order by s.reason = 'complained' desc
    limit 1;
  if v_suppressed is not null and v_mailbox is not null then
    -- A hash made under a link secret (before this migration) becomes the mailbox's own, which
    -- no rotation forgets.
    insert into public.subscriber_suppressions as s (address_hash, reason) values (v_mailbox, v_suppressed)
      on conflict (address_hash) do update set reason = excluded.reason where s.reason <> 'complained';
    delete from public.subscriber_suppressions s where s.address_hash = any(p_address_hashes[2:]) and s.address_hash <> v_mailbox;
  end if;
  loop
    insert into public.email_signups as e (email, source, signup_ip_hash, pending_since, unsubscribed_at, unsubscribe_reason)
    values (
      p_email, p_source, p_network_hash,
      case when p_mode = 'double' and v_suppressed is null then now() end,
      case when v_suppressed is not null then now() end,
      v_suppressed
    )
    on conflict (email) do nothing
    returning e.id::text, e.status into v_id, v_status;
    v_inserted := v_id is not null;
    if not v_inserted then
      select e.id::text, e.status into v_id, v_status
        from public.email_signups e where e.email = lower(btrim(p_email)) for update;
    end if;
    -- Deleted between the insert and the lock (the owner's "delete my data"): try again.
    exit when v_id is not null;
  end loop;

  if v_status = 'active' and v_inserted then
    return json_build_object('id', v_id, 'outcome', 'subscribed');
  end if;
  if v_status = 'active' then
    return json_build_object('id', v_id, 'outcome', case when p_mode = 'single' then 'already_subscribed' else 'nothing_to_send' end);
  end if;

  if v_status in ('unsubscribed', 'pending') and p_mode = 'single' then
    update public.email_signups e
      set unsubscribed_at = null, unsubscribe_reason = null, pending_since = null,
          resubscribed_at = case when e.status = 'unsubscribed' then now() else e.resubscribed_at end,
          status_changed_at = now(), source = p_source, signup_ip_hash = p_network_hash
      where e.id::text = v_id;
    return json_build_object('id', v_id, 'outcome', 'subscribed');
  end if;

  if v_status = 'unsubscribed' then
    -- Double mode: back to waiting for the owner's confirmation.
    update public.email_signups e
      set unsubscribed_at = null, unsubscribe_reason = null, pending_since = now(),
          status_changed_at = now(), source = p_source, signup_ip_hash = p_network_hash
      where e.id::text = v_id;
    v_status := 'pending';
  end if;

  -- The row is locked (inserted or selected for update above), so reading its throttle and then
  -- claiming it cannot race; the mailbox's claim is one atomic upsert, so two spellings posted at
  -- once cannot both win it.
  v_throttle := case when v_status = 'pending' then interval '24 hours' else interval '30 days' end;
  select e.confirmation_sent_at is null or e.confirmation_sent_at <= now() - v_throttle into v_due
    from public.email_signups e where e.id::text = v_id;
  if v_due and v_mailbox is not null then
    insert into public.mailbox_confirmations as m (mailbox_hash, sent_at) values (v_mailbox, now())
      on conflict (mailbox_hash) do update set sent_at = excluded.sent_at where m.sent_at <= now() - v_throttle
      returning true into v_due;
    v_due := coalesce(v_due, false);
  end if;
  if v_due then
    update public.email_signups e set confirmation_sent_at = now() where e.id::text = v_id;
  end if;
  return json_build_object('id', v_id, 'outcome', case when v_due then 'send_confirmation' else 'nothing_to_send' end);
end
$$;

-- Single mode's group commit (server/store/signup-batcher.ts; 20261124001010 wrote it for two
-- hashes per row): rows with distinct addresses inserted in the order given; an address the reader
-- had left (or that waited for a confirmation) is activated again. p_address_hashes holds every
-- row's hashes as JSON ([["mailbox hash", "older hash", …], …]); a row any of whose hashes is on
-- the suppression list is left out, as are rows already there in any other state: signup_subscriber
-- decides those. Answers {"address": "id", …} for the addresses this call made active.
drop function if exists public.signup_subscribers_many(text[], text[], text[], text[], text[]);
create or replace function public.signup_subscribers_many(
  p_emails text[], p_sources text[], p_network_hashes text[], p_address_hashes jsonb
)
returns jsonb
language sql
volatile
security invoker
set search_path = ''
as $$
  with activated as (
    insert into public.email_signups as e (email, source, signup_ip_hash)
    select incoming.email, incoming.source, incoming.network_hash
    from unnest(p_emails, p_sources, p_network_hashes) with ordinality as incoming(email, source, network_hash, position)
    where not exists (
      select 1 from public.subscriber_suppressions s
      where s.address_hash in (select jsonb_array_elements_text(coalesce(p_address_hashes -> (incoming.position::int - 1), '[]'::jsonb)))
    )
    order by incoming.position
    on conflict (email) do update
      set unsubscribed_at = null, unsubscribe_reason = null, pending_since = null, status_changed_at = now(),
          resubscribed_at = case when e.status = 'unsubscribed' then now() else e.resubscribed_at end,
          source = excluded.source, signup_ip_hash = excluded.signup_ip_hash
      where e.status in ('unsubscribed', 'pending')
    returning e.id::text as id, e.email
  )
  select coalesce(jsonb_object_agg(a.email, a.id), '{}'::jsonb) from activated a;
$$;

-- A confirmation that could not be sent gives its throttle back, the row's and the mailbox's, so
-- the reader's next attempt sends one instead of waiting out the day. The mailbox's claim is given
-- back only if it is still this row's (claimed in the same statement, so at the same instant),
-- never a later claim by another spelling. (Replaces 20261124001010's one-argument version.)
drop function if exists public.release_confirmation(text);
create or replace function public.release_confirmation(p_id text, p_mailbox_hash text)
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_sent timestamptz;
begin
  select e.confirmation_sent_at into v_sent from public.email_signups e where e.id::text = p_id for update;
  if v_sent is null then
    return;
  end if;
  delete from public.mailbox_confirmations m where m.mailbox_hash = p_mailbox_hash and m.sent_at = v_sent;
  update public.email_signups e set confirmation_sent_at = null where e.id::text = p_id;
end
$$;

-- Monday's prune (20261124005010) also forgets mailbox throttles older than the longest window.
create or replace function public.prune_pending_subscribers(p_days integer)
returns integer
language sql
volatile
security invoker
set search_path = ''
as $$
  with gone as (
    delete from public.email_signups e
    where e.pending_since is not null
      and e.pending_since < now() - make_interval(days => p_days)
      and coalesce(e.confirmation_sent_at, e.pending_since) < now() - make_interval(days => p_days)
    returning 1
  ),
  forgotten as (
    delete from public.mailbox_confirmations m where m.sent_at < now() - interval '30 days' returning 1
  )
  select count(*)::int from gone;
$$;

do $$
declare
  fn text;
  fns text[] := array[
    'public.mailbox_hash_key(text)',
    'public.signup_subscriber(text, text, text, text, text[])',
    'public.signup_subscribers_many(text[], text[], text[], jsonb)',
    'public.release_confirmation(text, text)',
    'public.prune_pending_subscribers(integer)'
  ];
begin
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
    revoke all on public.app_keys, public.mailbox_confirmations from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on public.app_keys, public.mailbox_confirmations from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant select, insert on public.app_keys to service_role;
    grant select, insert, update, delete on public.mailbox_confirmations to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
