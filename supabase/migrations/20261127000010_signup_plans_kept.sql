-- Goal (signup ≥ 0.6 × raw INSERT on PostgreSQL): the signup statement's plans are made once per
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
-- Together: ~690 µs per call of one signup, and ~210 µs per signup in calls of 12 (~260 before).

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

-- The signup statement itself (20261126002010's), now with the same setting, and with one step
-- fewer in the usual case: when every row is within its limits (a moment's new addresses), the rows
-- go to signup_subscribers_many as they came, rather than through four subqueries that pick the
-- rows within (a statement's executor set-up each): ~100 µs less per call (alternating calls of
-- one signup, ~725 -> ~620 µs of the database's CPU).
create or replace function public.signup_counted_many(
  p_keys text[], p_points integer[], p_window_ms integer[],
  p_emails text[], p_sources text[], p_network_hashes text[], p_address_hashes jsonb, p_limits jsonb
)
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  v_counts jsonb;
  v_within integer[];
  v_activated jsonb;
begin
  v_counts := public.signup_rate_limit_hit_many(p_keys, p_points, p_window_ms);
  select coalesce(array_agg(r.position order by r.position), '{}')
  into v_within
  from generate_subscripts(p_emails, 1) as r(position)
  where not exists (
    select 1
    from jsonb_array_elements(coalesce(p_limits -> (r.position - 1), '[]'::jsonb)) as l(item)
    -- A key without a count (never expected) counts as over its limit.
    where coalesce((v_counts -> (l.item ->> 0) ->> 'points')::integer, 2147483647) - (l.item ->> 1)::integer > (l.item ->> 2)::integer
  );
  if cardinality(v_within) = 0 then
    v_activated := '{}'::jsonb;
  elsif cardinality(v_within) = cardinality(p_emails) then
    v_activated := public.signup_subscribers_many(p_emails, p_sources, p_network_hashes, p_address_hashes);
  else
    v_activated := public.signup_subscribers_many(
      array(select p_emails[w.position] from unnest(v_within) with ordinality as w(position, n) order by w.n),
      array(select p_sources[w.position] from unnest(v_within) with ordinality as w(position, n) order by w.n),
      array(select p_network_hashes[w.position] from unnest(v_within) with ordinality as w(position, n) order by w.n),
      (select coalesce(jsonb_agg(coalesce(p_address_hashes -> (w.position - 1), '[]'::jsonb) order by w.n), '[]'::jsonb)
       from unnest(v_within) with ordinality as w(position, n))
    );
  end if;
  return jsonb_build_object('counts', v_counts, 'activated', v_activated);
end
$$;

notify pgrst, 'reload schema';
