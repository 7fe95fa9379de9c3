-- "Delete my data" also forgets the mailbox's confirmation throttle (a keyed hash and a time), so
-- after a delete the only row left about the address is the suppression hash of one that bounced
-- or complained. Same function as 20261124003010's, plus that one statement; the throttle of a
-- suppressed address stays, as its suppression does.
create or replace function public.delete_subscriber(p_id text, p_address_hash text)
returns text
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_status text;
begin
  delete from public.email_signups e where e.id::text = p_id returning e.status into v_status;
  if v_status is null then
    return null;
  end if;
  if v_status in ('bounced', 'complained') then
    insert into public.subscriber_suppressions (address_hash, reason) values (p_address_hash, v_status)
      on conflict (address_hash) do update set reason = excluded.reason
      where public.subscriber_suppressions.reason <> 'complained';
  else
    delete from public.mailbox_confirmations m where m.mailbox_hash = p_address_hash;
  end if;
  return v_status;
end
$$;
