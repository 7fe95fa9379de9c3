-- A notice for NOTICE_WEBHOOK_URL when OPERATOR_EMAIL is not set. With an OPERATOR_EMAIL the notice's
-- outbox row queues its post through the trigger of 20261130005010; without one there is no outbox
-- row, so the notice is queued for the webhook directly.
create or replace function public.notice_webhook_enqueue(p_text text)
returns void
language sql
volatile
security invoker
set search_path = ''
as $$
  insert into public.notice_webhooks (text) values (p_text);
$$;

do $$
begin
  revoke all on function public.notice_webhook_enqueue(text) from public;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function public.notice_webhook_enqueue(text) from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on function public.notice_webhook_enqueue(text) from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant execute on function public.notice_webhook_enqueue(text) to service_role;
  end if;
end
$$;
