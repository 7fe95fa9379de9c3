-- The daily housekeeping's bounded prune of unconfirmed signups follows the same rule as the
-- unbounded one: a row whose owner ever confirmed is never pruned, whatever its state says now (a
-- merge of spellings could once leave a confirmed reader pending).
create or replace function public.prune_pending_subscribers_batch(p_days integer, p_limit integer)
returns integer
language sql
volatile
security invoker
set search_path = ''
as $$
  with gone as (
    delete from public.email_signups e
    where e.ctid in (
      select s.ctid from public.email_signups s
      where s.pending_since is not null
        and s.confirmed_at is null
        and s.pending_since < now() - make_interval(days => p_days)
        and coalesce(s.confirmation_sent_at, s.pending_since) < now() - make_interval(days => p_days)
      limit greatest(p_limit, 1)
    )
    returning 1
  ),
  forgotten as (
    delete from public.mailbox_confirmations m
    where m.ctid in (select c.ctid from public.mailbox_confirmations c where c.sent_at < now() - interval '30 days' limit greatest(p_limit, 1))
    returning 1
  )
  select count(*)::int from gone;
$$;

-- create or replace keeps the grants the function had (service_role only).
