-- Confirmation links carry the row's link version, and "Subscribe again"
-- by an owner who confirmed before always sends its confirmation.
--
-- link_version (20261124003010_subscriber_links.sql) goes up whenever the row's state changes: an
-- unsubscribe, a bounce, a complaint, a return to pending. A confirmation e-mail now records the
-- version at the moment it was queued, and its link names it (server/unsubscribe-token.ts), so a
-- link mailed before a complaint cannot make the row active after it. Links mailed before this
-- migration name no version; they still confirm a pending row, and nothing else.

-- The promise and its e-mail in one transaction, as in 20261124002000_mail_outbox.sql; the
-- confirmation's payload now holds the link version its link is made for.
create or replace function public.outbox_from_signup()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
begin
  if new.confirmation_sent_at is not null
     and (tg_op = 'INSERT' or old.confirmation_sent_at is distinct from new.confirmation_sent_at) then
    perform public.outbox_enqueue('confirm', new.id::text, jsonb_build_object('version', new.link_version));
  end if;
  if new.welcomed_at is not null and (tg_op = 'INSERT' or old.welcomed_at is null) then
    perform public.outbox_enqueue('welcome', new.id::text, '{}'::jsonb);
  end if;
  return null;
end
$$;

-- The confirmation button. p_version: the link version the link was made for, or null for a link
-- mailed before versions (it may only confirm a pending row). An active row answers as before; a
-- link made before the row last changed state answers {refused: true} and changes nothing.
-- Otherwise as activate_subscriber_welcome's confirmation: from pending, bounced or complained.
create or replace function public.confirm_subscriber_link(p_id text, p_version integer, p_network_hash text, p_welcome boolean)
returns json
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_email text;
  v_status text;
  v_version integer;
begin
  select e.email, e.status, e.link_version into v_email, v_status, v_version
    from public.email_signups e where e.id::text = p_id for update;
  if v_email is null then
    return null;
  end if;
  if v_status = 'active' then
    return json_build_object('email', v_email, 'status', v_status, 'activated', false, 'refused', false);
  end if;
  if (p_version is null and v_status <> 'pending') or (p_version is not null and p_version <> v_version) then
    return json_build_object('email', v_email, 'status', v_status, 'activated', false, 'refused', true);
  end if;
  return (public.activate_subscriber_welcome(p_id, p_network_hash, array['pending', 'bounced', 'complained'], true, p_welcome)::jsonb
    || jsonb_build_object('refused', false))::json;
end
$$;

-- "Subscribe again" in double mode, pressed on the owner's own page (reached with the signed link
-- of an e-mail sent to the address): the row waits for a confirmation again, and the confirmation
-- is sent. The 24-hour throttle per row and per mailbox keeps strangers from filling an inbox with
-- confirmations; an address that confirmed before is a known owner, whose confirmation always goes
-- (the server limits how often per hour, as for fresh links). It still claims the mailbox's
-- throttle, so a stranger's signup of another spelling the same day sends nothing more. For an
-- address that never confirmed, the throttles hold, and when one does, nothing changes at all.
-- Answers {outcome, status}: outcome 'sent', 'throttled' (nothing sent, nothing changed) or
-- 'unchanged' (active, bounced or complained: not this function's to change); null when there is
-- no such row.
create or replace function public.resubscribe_by_owner(p_id text, p_network_hash text, p_mailbox_hash text)
returns json
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_status text;
  v_owner boolean;
  v_due boolean;
begin
  select e.status, e.confirmed_at is not null,
         e.confirmation_sent_at is null or e.confirmation_sent_at <= now() - interval '24 hours'
    into v_status, v_owner, v_due
    from public.email_signups e where e.id::text = p_id for update;
  if v_status is null then
    return null;
  end if;
  if v_status not in ('unsubscribed', 'pending') then
    return json_build_object('outcome', 'unchanged', 'status', v_status);
  end if;
  if p_mailbox_hash is not null then
    insert into public.mailbox_confirmations as m (mailbox_hash, sent_at) values (p_mailbox_hash, now())
      on conflict (mailbox_hash) do update set sent_at = excluded.sent_at
      where v_owner or (v_due and m.sent_at <= now() - interval '24 hours')
      returning true into v_due;
    v_due := coalesce(v_due, false);
  end if;
  if not (v_owner or v_due) then
    return json_build_object('outcome', 'throttled', 'status', v_status);
  end if;
  if v_status = 'unsubscribed' then
    update public.email_signups e
      set unsubscribed_at = null, unsubscribe_reason = null, pending_since = now(),
          status_changed_at = now(), signup_ip_hash = p_network_hash
      where e.id::text = p_id;
  end if;
  -- A separate statement after the state change, so the confirmation's outbox row (queued by the
  -- trigger on this column) carries the link version the state change gave the row.
  update public.email_signups e set confirmation_sent_at = now() where e.id::text = p_id;
  return json_build_object('outcome', 'sent', 'status', 'pending');
end
$$;

do $$
declare
  fn text;
  fns text[] := array[
    'public.confirm_subscriber_link(text, integer, text, boolean)',
    'public.resubscribe_by_owner(text, text, text)'
  ];
begin
  revoke all on function public.outbox_from_signup() from public;
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
