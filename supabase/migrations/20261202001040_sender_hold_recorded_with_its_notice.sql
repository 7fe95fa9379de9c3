-- A refusal of the sender that begins a hold was recorded by one call and its operator's notice
-- queued by the next. A worker that died between the two left the hold recorded, every other
-- worker read it as told, and the operator never heard that mail was held. The record and the
-- notice (an e-mail through the outbox, sent once the provider takes mail again, or the webhook's
-- post when there is no address) are now one statement.
create or replace function public.outbox_hold_sender_with_notice(p_cause text, p_reason text, p_now timestamptz, p_email jsonb, p_webhook_text text)
returns boolean
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  if not public.outbox_hold_sender(p_cause, p_reason, p_now) then
    return false;
  end if;
  if p_email is not null then
    perform public.outbox_enqueue('operator', null, p_email);
  elsif p_webhook_text is not null then
    perform public.notice_webhook_enqueue(p_webhook_text);
  end if;
  return true;
end
$$;

do $$
declare
  f constant text := 'public.outbox_hold_sender_with_notice(text, text, timestamptz, jsonb, text)';
begin
  execute format('revoke all on function %s from public', f);
  if exists (select 1 from pg_roles where rolname = 'anon') then
    execute format('revoke all on function %s from anon', f);
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    execute format('revoke all on function %s from authenticated', f);
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    execute format('grant execute on function %s to service_role', f);
  end if;
end
$$;
