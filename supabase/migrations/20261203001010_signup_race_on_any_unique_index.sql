-- Two signups of one address at the same instant: signup_decide's insert skipped a clash only on
-- the mailbox index (ON CONFLICT (mailbox)), and PostgreSQL raises a clash met on another unique
-- index (email_signups_email_key) instead. The insert now skips a clash on any unique index; the
-- loop after it reads the row that won, as before. The function is otherwise unchanged, so its
-- grants stay as they were.

create or replace function public.signup_decide(p_email text, p_source text, p_mode text, p_network_hash text, p_address_hashes text[], p_welcome boolean, p_owner boolean default false, p_origin jsonb default null)
returns json
language plpgsql
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
  v_referrer uuid;
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
  -- A reader's share link: it credits its owner only through a row it creates (below), so never
  -- the owner's own mailbox and never a mailbox already on the list.
  if p_origin ->> 'share' is not null then
    select r.id into v_referrer from public.email_signups r where r.share_code = p_origin ->> 'share';
  end if;
  loop
    insert into public.email_signups as e (
      email, source, signup_ip_hash, pending_since, unsubscribed_at, unsubscribe_reason,
      origin_page, origin_ref, origin_utm_source, origin_utm_medium, origin_utm_campaign, referred_by, via_share
    )
    values (
      p_email, p_source, p_network_hash,
      case when p_mode = 'double' and v_suppressed is null then now() end,
      case when v_suppressed is not null then now() end,
      v_suppressed,
      p_origin ->> 'page', p_origin ->> 'ref', p_origin ->> 'utm_source', p_origin ->> 'utm_medium', p_origin ->> 'utm_campaign',
      v_referrer, v_referrer is not null
    )
    -- Any unique index, not only the mailbox: two transactions inserting the same address at once
    -- can meet on the e-mail's own index first, which a targeted ON CONFLICT would raise as an error.
    on conflict do nothing
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
  -- bounced confirmation reached no inbox, so no inbox's throttle is spent. The row stays bounced
  -- (no digest, never pruned) until the owner follows that confirmation.
  if v_status = 'bounced' and not v_inserted then
    select e.confirmed_at is null and e.email <> lower(btrim(p_email)) into v_stranger_bounce
      from public.email_signups e where e.id::text = v_id;
    if v_stranger_bounce then
      update public.email_signups e
        set email = p_email, status_changed_at = now(), source = p_source, signup_ip_hash = p_network_hash
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
