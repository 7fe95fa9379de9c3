-- A scheduled run that ended (a late run finished, a late run given up as missed, an unfinished run
-- not resumed in time) settled its tick by one call and queued the operator's notice by the next.
-- A server that died between the two left the tick settled, no other server looked at it again,
-- and the operator never heard that the week went out late or not at all. The tick's end and its
-- notice are now one statement, as a missed tick's record and a sender's hold already are; the
-- three share one helper for where a notice goes.

-- Queues an operator's notice: an e-mail through the outbox (whose row also queues the webhook's
-- post), or, when there is no address, only the webhook's post. Nothing when neither is given.
create or replace function public.operator_notice_enqueue(p_email jsonb, p_webhook_text text)
returns void
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  if p_email is not null then
    perform public.outbox_enqueue('operator', null, p_email);
  elsif p_webhook_text is not null then
    perform public.notice_webhook_enqueue(p_webhook_text);
  end if;
end
$$;

create or replace function public.digest_end_tick_with_notice(p_tick timestamptz, p_holder text, p_now timestamptz, p_state text, p_recap_date date, p_email jsonb, p_webhook_text text)
returns boolean
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  if not public.digest_end_tick(p_tick, p_holder, p_now, p_state, p_recap_date) then
    return false;
  end if;
  perform public.operator_notice_enqueue(p_email, p_webhook_text);
  return true;
end
$$;

create or replace function public.digest_record_missed_tick_with_notice(p_tick timestamptz, p_holder text, p_now timestamptz, p_email jsonb, p_webhook_text text)
returns boolean
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  if not public.digest_record_missed_tick(p_tick, p_holder, p_now) then
    return false;
  end if;
  perform public.operator_notice_enqueue(p_email, p_webhook_text);
  return true;
end
$$;

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
  perform public.operator_notice_enqueue(p_email, p_webhook_text);
  return true;
end
$$;

do $$
declare
  f text;
begin
  foreach f in array array[
    'public.operator_notice_enqueue(jsonb, text)',
    'public.digest_end_tick_with_notice(timestamptz, text, timestamptz, text, date, jsonb, text)'
  ] loop
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
  end loop;
end
$$;
