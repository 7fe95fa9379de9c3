-- A 409 on a retry of an outbox message is settled as the digest settles it.
-- Resend answers 409 invalid_idempotent_request when an earlier request with the message's key
-- (`outbox/<id>`) was accepted with other content: the message very likely went out, but the
-- outbox cannot know. It was counted `sent` (a guess) and before that `failed` (wrong, and it gave
-- the confirmation throttle back, inviting a second copy). Now it is `unknown`: closed, never tried
-- again, its throttle kept, and counted on its own in the report and `npm run digest -- --history`.

alter table public.mail_outbox drop constraint if exists mail_outbox_state_check;
alter table public.mail_outbox add constraint mail_outbox_state_check
  check (state in ('queued', 'retrying', 'sent', 'failed', 'cancelled', 'unknown'));

-- As in 20261124002010_outbox_gives_back_mailbox_throttle.sql, plus 'unknown' (closed with its
-- reason, like failed, but keeping the throttle: the reader very likely has the e-mail).
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
  if p_state not in ('sent', 'retrying', 'failed', 'cancelled', 'unknown') then
    raise exception 'outbox state must be sent, retrying, failed, cancelled or unknown, not %', p_state using errcode = '22023';
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

-- As in 20261124002000_mail_outbox.sql, plus the unknown count, and unknown messages among the
-- latest ones listed with their state and reason (the operator may want to ask the reader).
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
    ), '[]'::jsonb)
  );
$$;

notify pgrst, 'reload schema';
