-- A deleted reader's message leaves no trace of them. A settled batch keeps, beside its
-- recipients, the provider's id of each message (provider_ids, parallel to subscriber_ids); a
-- delete put 'deleted' in the recipient's place but kept the message id, with which the provider's
-- own records (its API, its webhook events) still name the address; so did the message id of the
-- reader's bounce and complaint events. A delete now forgets both, and the batches of readers
-- deleted before this migration are scrubbed the same way. (No figure changes: an event is
-- attributed to its recap through the ledger, whose rows of a deleted reader were already deleted.)

-- As in 20261126004010_report_counts_per_recap.sql, plus the deleted reader's message ids.
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

update public.digest_batches b
  set provider_ids = array(
        select case when m.id = 'deleted' then null else m.provider_id end
        from unnest(b.subscriber_ids, b.provider_ids) with ordinality as m(id, provider_id, n) order by m.n)
  where b.provider_ids is not null and 'deleted' = any(b.subscriber_ids);
