-- The subscriber's state changes as functions, so that every backend decides them the same way
-- and inside the database: the SQL store calls them directly, the Supabase store through
-- /rest/v1/rpc. Each takes the row's lock (or the unique key) before it decides, never a read
-- before a write, so two replicas or two tabs cannot both act on a stale view.

-- A signup. p_mode is the operator's SIGNUP_CONFIRMATION ('single' | 'double'); p_address_hashes
-- are the keyed hashes of the address under the current (and previous) secret, to find it on the
-- suppression list of deleted data. Returns {id, outcome}, the outcome one of:
--   subscribed          the address is active now (single mode: new, unsubscribed or pending)
--   already_subscribed  it was active already (single mode)
--   send_confirmation   a confirmation e-mail is due now (the throttle was claimed by this call)
--   nothing_to_send     a confirmation went out recently, or the address is active (double mode)
-- bounced and complained addresses are never made active here, in either mode: their owner's
-- confirmation is the only way back, and it is mailed at most once per 30 days.
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
  v_id text;
  v_status text;
  v_suppressed text;
  v_throttle interval;
  v_claimed boolean;
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

  v_throttle := case when v_status = 'pending' then interval '24 hours' else interval '30 days' end;
  update public.email_signups e
    set confirmation_sent_at = now()
    where e.id::text = v_id and (e.confirmation_sent_at is null or e.confirmation_sent_at <= now() - v_throttle)
    returning true into v_claimed;
  return json_build_object('id', v_id, 'outcome', case when v_claimed then 'send_confirmation' else 'nothing_to_send' end);
end
$$;

-- The owner's own step back onto the list: the confirmation button (from pending, bounced or
-- complained) or "Subscribe again" on the subscription page (from unsubscribed or pending).
-- Only the states in p_from are changed. Returns {email, status, activated}: the row as it is now
-- and whether this call made it active; null when the subscriber does not exist.
create or replace function public.activate_subscriber(p_id text, p_network_hash text, p_from text[], p_confirmation boolean)
returns json
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_email text;
  v_status text;
begin
  select e.email, e.status into v_email, v_status from public.email_signups e where e.id::text = p_id for update;
  if v_email is null then
    return null;
  end if;
  if not (v_status = any(p_from)) then
    return json_build_object('email', v_email, 'status', v_status, 'activated', false);
  end if;
  update public.email_signups e
    set unsubscribed_at = null, unsubscribe_reason = null, pending_since = null, status_changed_at = now(),
        resubscribed_at = case when v_status = 'pending' then e.resubscribed_at else now() end,
        confirmed_at = case when p_confirmation then now() else e.confirmed_at end,
        confirm_ip_hash = case when p_confirmation then p_network_hash else e.confirm_ip_hash end
    where e.id::text = p_id;
  return json_build_object('email', v_email, 'status', 'active', 'activated', true);
end
$$;

-- An address leaves: the reader unsubscribed, or the provider reported a hard bounce or a spam
-- complaint. The stricter state wins (complained > bounced > unsubscribed), so a complaint that
-- arrives after an unsubscribe still keeps the address from any signup; the first time it left is
-- kept, and replays change nothing. Returns false when there is no such subscriber.
create or replace function public.mark_subscriber_left(p_id text, p_reason text)
returns boolean
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_status text;
  v_rank constant text[] := array['unsubscribed', 'bounced', 'complained'];
begin
  if not (p_reason = any(v_rank)) then
    raise exception 'reason must be unsubscribed, bounced or complained, not %', p_reason using errcode = '22023';
  end if;
  select e.status into v_status from public.email_signups e where e.id::text = p_id for update;
  if v_status is null then
    return false;
  end if;
  if coalesce(array_position(v_rank, v_status), 0) < array_position(v_rank, p_reason) then
    update public.email_signups e
      set unsubscribed_at = coalesce(e.unsubscribed_at, now()), unsubscribe_reason = p_reason,
          pending_since = null, status_changed_at = now()
      where e.id::text = p_id;
  end if;
  return true;
end
$$;

-- "Delete my data": the row and its ledger rows go. A keyed hash of the address stays on the
-- suppression list only if it had bounced or complained. Returns the state it had, or null.
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
  delete from public.digest_deliveries d where d.subscriber_id = p_id;
  if v_status in ('bounced', 'complained') then
    insert into public.subscriber_suppressions (address_hash, reason) values (p_address_hash, v_status)
      on conflict (address_hash) do update set reason = excluded.reason
      where public.subscriber_suppressions.reason <> 'complained';
  end if;
  return v_status;
end
$$;

-- Monday's clean-up: signups still waiting for their confirmation after p_days days go (with
-- nothing else to keep: they never received a digest). Returns how many.
create or replace function public.prune_pending_subscribers(p_days integer)
returns integer
language sql
volatile
security invoker
set search_path = ''
as $$
  with gone as (
    delete from public.email_signups e
    where e.pending_since is not null and e.pending_since < now() - make_interval(days => p_days)
    returning 1
  )
  select count(*)::int from gone;
$$;

-- Postgres lets every role execute a new function; only the server's own role may call these.
revoke all on function public.signup_subscriber(text, text, text, text, text[]) from public;
revoke all on function public.activate_subscriber(text, text, text[], boolean) from public;
revoke all on function public.mark_subscriber_left(text, text) from public;
revoke all on function public.delete_subscriber(text, text) from public;
revoke all on function public.prune_pending_subscribers(integer) from public;

do $$
declare
  fn text;
  fns text[] := array[
    'public.signup_subscriber(text, text, text, text, text[])',
    'public.activate_subscriber(text, text, text[], boolean)',
    'public.mark_subscriber_left(text, text)',
    'public.delete_subscriber(text, text)',
    'public.prune_pending_subscribers(integer)'
  ];
begin
  foreach fn in array fns loop
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
    revoke all on public.subscriber_suppressions from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on public.subscriber_suppressions from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant select, insert, update, delete on public.email_signups to service_role;
    grant select, insert, delete on public.digest_deliveries to service_role;
    grant select, insert, update, delete on public.subscriber_suppressions to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
