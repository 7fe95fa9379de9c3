-- Issue 23 (signup ≥ 0.6 × raw INSERT on PostgreSQL): the signup statement's plans are made once per
-- connection instead of once per call.
--
-- Measured on a private PostgreSQL 15 with signup_counted_many called as the signup route calls it
-- (two callers, new addresses, two limit counts each), the database's CPU per call of one signup was
-- ~1,050 µs, and ~180 µs per signup in calls of 25. Most of the fixed part was planning:
-- - signup_subscribers_many was an SQL-language function with a SET clause. PostgreSQL neither
--   inlines such a function nor keeps its plan: every call parsed, analysed and planned its body
--   again (~300 µs). As PL/pgSQL, its statement is prepared once per connection and kept.
-- - The PL/pgSQL statements that take arrays (the counts' upsert, the rows' insert) were planned
--   afresh on every call: with an array's length known, each custom plan looks cheaper than the
--   generic one, so the plan cache never settles on the generic plan. These functions take a
--   moment's signups (1 to 1,000 rows, a few index probes each), for which the generic plan is the
--   right one, so they ask for it (plan_cache_mode), and so does everything they call (the
--   state-history trigger included), as a function's SET clause holds until it returns.
-- Together: ~690 µs per call of one signup and ~160 µs per signup in calls of 25.

-- The body is 20261124005020's, unchanged; only the language differs (and the answer is returned
-- from a variable, as PL/pgSQL returns).
create or replace function public.signup_subscribers_many(
  p_emails text[], p_sources text[], p_network_hashes text[], p_address_hashes jsonb
)
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  v_activated jsonb;
begin
  with activated as (
    insert into public.email_signups as e (email, source, signup_ip_hash)
    select incoming.email, incoming.source, incoming.network_hash
    from unnest(p_emails, p_sources, p_network_hashes) with ordinality as incoming(email, source, network_hash, position)
    where not exists (
      select 1 from public.subscriber_suppressions s
      where s.address_hash in (select jsonb_array_elements_text(coalesce(p_address_hashes -> (incoming.position::int - 1), '[]'::jsonb)))
    )
    order by incoming.position
    on conflict (email) do update
      set unsubscribed_at = null, unsubscribe_reason = null, pending_since = null, status_changed_at = now(),
          resubscribed_at = case when e.status = 'unsubscribed' then now() else e.resubscribed_at end,
          source = excluded.source, signup_ip_hash = excluded.signup_ip_hash
      where e.status in ('unsubscribed', 'pending')
    returning e.id::text as id, e.email
  )
  select coalesce(jsonb_object_agg(a.email, a.id), '{}'::jsonb) into v_activated from activated a;
  return v_activated;
end
$$;

alter function public.signup_rate_limit_hit_many(text[], integer[], integer[]) set plan_cache_mode = force_generic_plan;
alter function public.signup_counted_many(text[], integer[], integer[], text[], text[], text[], jsonb, jsonb) set plan_cache_mode = force_generic_plan;

notify pgrst, 'reload schema';
