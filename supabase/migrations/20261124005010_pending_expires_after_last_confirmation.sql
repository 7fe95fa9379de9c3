-- A pending signup expires 30 days after its LAST confirmation e-mail, not its
-- first signup. A reader who signed up again on day 29 got a fresh 7-day link the day before;
-- pruning the row on day 30 made that link answer "not found". confirmation_sent_at is when the
-- last confirmation was claimed (signup_subscriber sets it in the same statement that decides the
-- mail is due), so the row stays until p_days after the later of the two; every confirmation link
-- is valid for 7 days, far less than p_days, so no valid link ever points at a pruned row.
create or replace function public.prune_pending_subscribers(p_days integer)
returns integer
language sql
volatile
security invoker
set search_path = ''
as $$
  with gone as (
    delete from public.email_signups e
    where e.pending_since is not null
      and e.pending_since < now() - make_interval(days => p_days)
      and coalesce(e.confirmation_sent_at, e.pending_since) < now() - make_interval(days => p_days)
    returning 1
  )
  select count(*)::int from gone;
$$;

revoke all on function public.prune_pending_subscribers(integer) from public;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function public.prune_pending_subscribers(integer) from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on function public.prune_pending_subscribers(integer) from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant execute on function public.prune_pending_subscribers(integer) to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
