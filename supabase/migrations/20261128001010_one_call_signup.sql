-- A signup is one SQL call. The server used to gather signups into array
-- statements (two batchers, their _list and _many functions); now each POST /api/subscribe calls
-- signup_counted once: it counts the post against its network address and its mailbox and, when
-- both are within their limits, decides the signup (signup_decide), all in one transaction. Every
-- function no server calls any more is dropped (nothing has been released, so no older server
-- calls them either).

-- The signup with the state rules of DESIGN.md (20261124005020's signup_subscriber, unchanged) and,
-- with p_welcome, the welcome claim of an address it made active (20261124002000's
-- signup_subscriber_welcome), as one function. Answers {"id", "outcome"}: subscribed,
-- already_subscribed, send_confirmation or nothing_to_send.
create or replace function public.signup_decide(
  p_email text, p_source text, p_mode text, p_network_hash text, p_address_hashes text[], p_welcome boolean
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
    -- A hash made under a link secret (before 20261124005020) becomes the mailbox's own, which no
    -- rotation forgets.
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
    if p_welcome then
      update public.email_signups e set welcomed_at = now() where e.id::text = v_id and e.welcomed_at is null;
    end if;
    return json_build_object('id', v_id, 'outcome', 'subscribed');
  end if;
  if v_status = 'active' then
    return json_build_object('id', v_id, 'outcome', case when p_mode = 'single' then 'already_subscribed' else 'nothing_to_send' end);
  end if;

  if v_status in ('unsubscribed', 'pending') and p_mode = 'single' then
    update public.email_signups e
      set unsubscribed_at = null, unsubscribe_reason = null, pending_since = null,
          resubscribed_at = case when e.status = 'unsubscribed' then now() else e.resubscribed_at end,
          status_changed_at = now(), source = p_source, signup_ip_hash = p_network_hash,
          welcomed_at = case when p_welcome and e.welcomed_at is null then now() else e.welcomed_at end
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

-- A post to POST /api/subscribe: one point against its network address's counter, then (only when
-- that is within p_network_limit, so a refused post counts against no mailbox) one against its
-- mailbox's, then (only when that is within p_mailbox_limit) the signup itself. Answers
-- {"network": {points, ms_left}, "mailbox": {…} or absent, "decision": {id, outcome} or absent}.
-- One transaction: a signup that fails leaves no count behind either.
create or replace function public.signup_counted(
  p_network_key text, p_network_limit integer, p_network_window_ms integer,
  p_mailbox_key text, p_mailbox_limit integer, p_mailbox_window_ms integer,
  p_email text, p_source text, p_mode text, p_network_hash text, p_address_hashes text[], p_welcome boolean
)
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_network jsonb;
  v_mailbox jsonb;
begin
  v_network := public.signup_rate_limit_hit(p_network_key, 1, p_network_window_ms, false);
  if (v_network->>'points')::integer > p_network_limit then
    return jsonb_build_object('network', v_network);
  end if;
  v_mailbox := public.signup_rate_limit_hit(p_mailbox_key, 1, p_mailbox_window_ms, false);
  if (v_mailbox->>'points')::integer > p_mailbox_limit then
    return jsonb_build_object('network', v_network, 'mailbox', v_mailbox);
  end if;
  return jsonb_build_object(
    'network', v_network,
    'mailbox', v_mailbox,
    'decision', public.signup_decide(p_email, p_source, p_mode, p_network_hash, p_address_hashes, p_welcome)::jsonb
  );
end
$$;

-- Every overload of the functions no server calls any more.
do $$
declare
  fn regprocedure;
begin
  for fn in
    select p.oid::regprocedure from pg_proc p
    where p.pronamespace = 'public'::regnamespace
      and p.proname in (
        'signup_subscriber', 'signup_subscriber_welcome', 'signup_subscribers_many',
        'signup_counted_many', 'signup_counted_list', 'signup_rate_limit_hit_list', 'signup_rate_limit_hit_many',
        'signup_rate_limit_peek', 'signup_rate_limit_reset'
      )
  loop
    execute format('drop function %s', fn);
  end loop;
end
$$;

do $$
declare
  fn text;
  fns text[] := array[
    'public.signup_decide(text, text, text, text, text[], boolean)',
    'public.signup_counted(text, integer, integer, text, integer, integer, text, text, text, text, text[], boolean)'
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
end
$$;

notify pgrst, 'reload schema';
