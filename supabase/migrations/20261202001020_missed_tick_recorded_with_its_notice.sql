-- A tick past DIGEST_CATCHUP_HOURS was recorded as missed by one call and its notice queued by the
-- next. A server that died between the two (a crash loop, a host rebooted) left the tick recorded,
-- every later start read it as dealt with, and the week was missed without a word to the operator.
-- The record and the operator's notice (an e-mail through the outbox, or the webhook's post when
-- there is no address) are now one statement: both happen or neither does.
create or replace function public.digest_record_missed_tick_with_notice(p_tick timestamptz, p_holder text, p_now timestamptz, p_email jsonb, p_webhook_text text)
returns boolean
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  insert into public.digest_ticks (tick, holder, state, claimed_at, lease_until)
    values (p_tick, p_holder, 'missed', p_now, p_now)
    on conflict (tick) do nothing;
  if not found then
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
  f constant text := 'public.digest_record_missed_tick_with_notice(timestamptz, text, timestamptz, jsonb, text)';
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
