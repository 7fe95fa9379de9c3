-- A confirmation the outbox could not deliver (refused for good, or not out within 24 hours)
-- gives back every throttle it held: the row's (20261124002000) and, since 20261124005020, the
-- mailbox's, claimed by the same signup statement at the same instant as the outbox row was
-- written (so equal to its created_at), never a later claim by another spelling of the mailbox.
-- (Replaces 20261124002000's outbox_settle; the table referenced is looked up when it runs.)
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
  v_released integer;
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
      where e.id::text = v_subscriber and e.confirmation_sent_at = v_created;
    get diagnostics v_released = row_count;
    if v_released > 0 and to_regclass('public.mailbox_confirmations') is not null then
      execute 'delete from public.mailbox_confirmations m where m.sent_at = $1' using v_created;
    end if;
  end if;
  return true;
end
$$;

revoke all on function public.outbox_settle(bigint, text, text, integer, text) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function public.outbox_settle(bigint, text, text, integer, text) from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on function public.outbox_settle(bigint, text, text, integer, text) from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant execute on function public.outbox_settle(bigint, text, text, integer, text) to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
