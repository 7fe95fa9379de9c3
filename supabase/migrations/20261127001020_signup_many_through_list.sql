-- The signup statement's rules in one place: the previous release's signup_rate_limit_hit_many and
-- signup_counted_many (kept for servers not yet replaced in a rolling deploy, 20261127001010) now
-- call signup_rate_limit_hit_list and signup_counted_list and only reshape their answers into the
-- objects by key and by address those servers read. The counters' upsert and the check of each row
-- against its limits are then written once, in the _list functions, and a later change to either
-- cannot leave the two releases counting differently.

create or replace function public.signup_rate_limit_hit_many(p_keys text[], p_points integer[], p_window_ms integer[])
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  v_counts jsonb;
begin
  v_counts := public.signup_rate_limit_hit_list(p_keys, p_points, p_window_ms);
  return (
    select coalesce(jsonb_object_agg(k.key, jsonb_build_object('points', v_counts -> 'points' -> (k.n - 1)::integer, 'ms_left', v_counts -> 'ms_left' -> (k.n - 1)::integer)), '{}'::jsonb)
    from unnest(p_keys) with ordinality as k(key, n)
  );
end
$$;

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
  v_answer jsonb;
begin
  v_answer := public.signup_counted_list(
    p_keys, p_points, p_window_ms, p_emails, p_sources, p_network_hashes, p_address_hashes,
    -- Each limit [key, later, limit] as [the key's position in p_keys, later, limit]; a key not
    -- among them goes as null, which the statement reads as over its limit, as before.
    (select coalesce(jsonb_agg(
       (select coalesce(jsonb_agg(jsonb_build_array(
                 (select k.n - 1 from unnest(p_keys) with ordinality as k(key, n) where k.key = l.item ->> 0 limit 1),
                 l.item -> 1, l.item -> 2) order by l.n), '[]'::jsonb)
        from jsonb_array_elements(r.limits) with ordinality as l(item, n))
       order by r.n), '[]'::jsonb)
     from jsonb_array_elements(coalesce(p_limits, '[]'::jsonb)) with ordinality as r(limits, n))
  );
  return jsonb_build_object(
    'counts', (
      select coalesce(jsonb_object_agg(k.key, jsonb_build_object('points', v_answer -> 'points' -> (k.n - 1)::integer, 'ms_left', v_answer -> 'ms_left' -> (k.n - 1)::integer)), '{}'::jsonb)
      from unnest(p_keys) with ordinality as k(key, n)
    ),
    'activated', (
      select coalesce(jsonb_object_agg(e.email, v_answer -> 'ids' -> (e.n - 1)::integer), '{}'::jsonb)
      from unnest(p_emails) with ordinality as e(email, n)
      where jsonb_typeof(v_answer -> 'ids' -> (e.n - 1)::integer) = 'string'
    )
  );
end
$$;

notify pgrst, 'reload schema';
