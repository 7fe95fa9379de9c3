-- Holes where the subscriber's capabilities meet: each change below keeps a confirmed reader
-- on the list, a merged spelling's links working, and a stranger's spelling from locking the
-- owner out (docs/signup.md, docs/token-pages.md).

-- A row that was ever confirmed is someone's proven address: the pending prune, which exists to
-- forget strangers' unconfirmed signups, never deletes it, whatever state it is in now.
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
      and e.confirmed_at is null
      and e.pending_since < now() - make_interval(days => p_days)
      and coalesce(e.confirmation_sent_at, e.pending_since) < now() - make_interval(days => p_days)
    returning 1
  ),
  forgotten as (
    delete from public.mailbox_confirmations m where m.sent_at < now() - interval '30 days' returning 1
  )
  select count(*)::int from gone;
$$;

-- Rows the first version of the merge (20261128001020) demoted: a confirmed row made pending by
-- the pending_since of a merged spelling that never confirmed. They go back to the state the
-- merge took them from, as the state history recorded it; without that record they stay
-- pending (the prune above no longer deletes them), since guessing "active" could mail someone
-- who had left.
with demoted as (
  select e.id,
         (select h.from_state from public.subscriber_state_history h
           where h.subscriber_id = e.id::text and h.state = 'pending' and h.from_state in ('active', 'unsubscribed')
           order by h.changed_at desc, h.id desc limit 1) as was
  from public.email_signups e
  where e.pending_since is not null and e.unsubscribed_at is null and e.confirmed_at is not null
    and exists (
      select 1 from public.email_signups_merged m
      where m.merged_into = e.id::text
        and m.original ->> 'confirmed_at' is null
        and (m.original ->> 'pending_since')::timestamptz = e.pending_since)
)
update public.email_signups e
  set pending_since = null,
      unsubscribed_at = case when d.was = 'unsubscribed' then now() end,
      unsubscribe_reason = case when d.was = 'unsubscribed' then 'unsubscribed' end,
      status_changed_at = now()
  from demoted d
  where d.id = e.id and d.was is not null;

-- A link made for a row later merged into another spelling of its mailbox acts for the row it
-- was merged into: last week's one-click unsubscribe of `pat+news@` still unsubscribes pat.
create or replace function public.subscriber_current_id(p_id text)
returns text
language sql
stable
security invoker
set search_path = ''
as $$
  select coalesce((select m.merged_into from public.email_signups_merged m where m.id = p_id), p_id);
$$;

create or replace function public.subscriber_by_id(p_id text)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select public.subscriber_json(e) from public.email_signups e where e.id::text = public.subscriber_current_id(p_id);
$$;

create or replace function public.mark_subscriber_left(p_id text, p_reason text)
returns boolean
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_id text := public.subscriber_current_id(p_id);
  v_status text;
  v_rank constant text[] := array['unsubscribed', 'bounced', 'complained'];
begin
  if not (p_reason = any(v_rank)) then
    raise exception 'reason must be unsubscribed, bounced or complained, not %', p_reason using errcode = '22023';
  end if;
  select e.status into v_status from public.email_signups e where e.id::text = v_id for update;
  if v_status is null then
    return false;
  end if;
  if coalesce(array_position(v_rank, v_status), 0) < array_position(v_rank, p_reason) then
    update public.email_signups e
      set unsubscribed_at = coalesce(e.unsubscribed_at, now()), unsubscribe_reason = p_reason,
          pending_since = null, status_changed_at = now()
      where e.id::text = v_id;
  end if;
  return true;
end
$$;

-- Everything kept about a subscriber, every spelling merged into the row included (its address,
-- dates, network hashes and the deliveries the row could not take over): "download my data".
create or replace function public.subscriber_details(p_id text)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select public.subscriber_json(e) || jsonb_build_object(
    'status_changed_at', e.status_changed_at,
    'source', e.source,
    'resubscribed_at', e.resubscribed_at,
    'confirmed_at', e.confirmed_at,
    'unsubscribed_at', e.unsubscribed_at,
    'signup_ip_hash', e.signup_ip_hash,
    'confirm_ip_hash', e.confirm_ip_hash,
    'welcomed_at', e.welcomed_at,
    'deliveries', (
      select coalesce(jsonb_agg(jsonb_build_object('recap_date', to_char(d.recap_date, 'YYYY-MM-DD'), 'sent_at', d.sent_at) order by d.recap_date), '[]'::jsonb)
      from public.digest_deliveries d where d.subscriber_id = e.id::text),
    'merged_spellings', (
      select coalesce(jsonb_agg(jsonb_build_object(
          'email', m.original ->> 'email',
          'created_at', m.original -> 'created_at',
          'confirmed_at', m.original -> 'confirmed_at',
          'unsubscribed_at', m.original -> 'unsubscribed_at',
          'unsubscribe_reason', m.original -> 'unsubscribe_reason',
          'signup_ip_hash', m.original -> 'signup_ip_hash',
          'confirm_ip_hash', m.original -> 'confirm_ip_hash',
          'merged_at', m.merged_at,
          'deliveries', (
            select coalesce(jsonb_agg(jsonb_build_object('recap_date', left(d ->> 'recap_date', 10), 'sent_at', d -> 'sent_at') order by d ->> 'recap_date'), '[]'::jsonb)
            from jsonb_array_elements(coalesce(m.original -> 'deliveries', '[]'::jsonb)) d)
        ) order by m.original ->> 'created_at', m.id), '[]'::jsonb)
      from public.email_signups_merged m where m.merged_into = e.id::text))
  from public.email_signups e where e.id::text = public.subscriber_current_id(p_id);
$$;

-- Delete forgets every spelling: the ids and addresses of the rows merged into the deleted one
-- are scrubbed from the ledger, batch failures and run messages like its own (this trigger runs
-- before email_signups_forget_merged, by name, so the merged rows are still there to read).
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
  select v_ids || coalesce(array_agg(m.id), '{}'), v_emails || coalesce(array_agg(m.original ->> 'email') filter (where m.original ->> 'email' is not null), '{}')
    into v_ids, v_emails
    from public.email_signups_merged m where m.merged_into = any(v_ids);
  delete from public.digest_deliveries d where d.subscriber_id = any(v_ids);
  -- Its bounce or complaint events keep their type and time, but neither the id nor the message.
  update public.email_events ev set subscriber_id = null, provider_message_id = null where ev.subscriber_id = any(v_ids);
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
        provider_ids = case when b.provider_ids is null then null else array(
          select case when m.id = any(v_ids) then null else m.provider_id end
          from unnest(b.subscriber_ids, b.provider_ids) with ordinality as m(id, provider_id, n) order by m.n) end,
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

-- A complaint for an address with no row (deleted before the provider reported it) still
-- suppresses its mailbox: a later signup of any spelling mails nothing until the owner confirms.
create or replace function public.suppress_mailbox(p_address_hash text, p_reason text)
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  if p_reason not in ('bounced', 'complained') then
    raise exception 'reason must be bounced or complained, not %', p_reason using errcode = '22023';
  end if;
  insert into public.subscriber_suppressions as s (address_hash, reason) values (p_address_hash, p_reason)
    on conflict (address_hash) do update set reason = excluded.reason where s.reason <> 'complained';
end
$$;

-- The signup (20261128001020) with the owner's spelling winning over a stranger's bounced one.
create or replace function public.signup_decide(
  p_email text, p_source text, p_mode text, p_network_hash text, p_address_hashes text[], p_welcome boolean, p_owner boolean default false
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
  v_stranger_bounce boolean;
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
    on conflict (mailbox) do nothing
    returning e.id::text, e.status into v_id, v_status;
    v_inserted := v_id is not null;
    if not v_inserted then
      select e.id::text, e.status into v_id, v_status
        from public.email_signups e where e.mailbox = public.mailbox_key(p_email) for update;
    end if;
    -- Deleted between the insert and the lock (the owner's "delete my data"): try again.
    exit when v_id is not null;
  end loop;

  -- A bounce of a spelling nobody ever confirmed says nothing about the owner's own spelling
  -- (`victim+x@` may be another mailbox where `+` is no sub-address). The owner signing up their
  -- own spelling makes it the delivery address and gets a confirmation there at once: the
  -- bounced confirmation reached no inbox, so no inbox's throttle is spent.
  if v_status = 'bounced' and not v_inserted then
    select e.confirmed_at is null and e.email <> lower(btrim(p_email)) into v_stranger_bounce
      from public.email_signups e where e.id::text = v_id;
    if v_stranger_bounce then
      update public.email_signups e
        set email = p_email, unsubscribed_at = null, unsubscribe_reason = null, pending_since = now(),
            status_changed_at = now(), source = p_source, signup_ip_hash = p_network_hash
        where e.id::text = v_id;
      -- A statement of its own, so the confirmation's outbox row carries the new link version.
      update public.email_signups e set confirmation_sent_at = now() where e.id::text = v_id;
      if v_mailbox is not null then
        insert into public.mailbox_confirmations as m (mailbox_hash, sent_at) values (v_mailbox, now())
          on conflict (mailbox_hash) do update set sent_at = excluded.sent_at;
      end if;
      return json_build_object('id', v_id, 'outcome', 'send_confirmation');
    end if;
  end if;

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

  -- A complaint is the one signal a sender must never ignore: nothing goes to that inbox unless
  -- its owner asks from their own page.
  if v_status = 'complained' and not p_owner then
    return json_build_object('id', v_id, 'outcome', 'nothing_to_send');
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

do $$
declare
  fn text;
  fns text[] := array[
    'public.prune_pending_subscribers(integer)',
    'public.subscriber_current_id(text)',
    'public.subscriber_by_id(text)',
    'public.mark_subscriber_left(text, text)',
    'public.subscriber_details(text)',
    'public.suppress_mailbox(text, text)',
    'public.signup_decide(text, text, text, text, text[], boolean, boolean)'
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
  revoke all on function public.forget_deleted_subscribers() from public;
end
$$;

notify pgrst, 'reload schema';
