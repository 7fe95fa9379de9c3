-- Goal (signup ≥ 0.6 × raw INSERT): the signup statement answers in arrays, in the order the
-- server asked, instead of in objects keyed by count key and by address.
--
-- signup_rate_limit_hit_many and signup_counted_many answer {"<key>": {"points", "ms_left"}, …}
-- and {"<address>": id, …}. Every key there is a keyed hash or an address seen once, so each
-- answer made the server's JavaScript engine build a fresh object layout per key and enter every
-- key in its string table (~37 µs per statement of ~14 signups on the bench machine, beside
-- JSON.parse itself, and the layouts were garbage at the next collection). Arrays have one layout
-- whatever they hold:
-- - signup_rate_limit_hit_list answers {"points": [...], "ms_left": [...]} in the order of p_keys;
-- - signup_counted_list answers the same plus "ids": the id of the subscriber each row of p_emails
--   made active, or null where the row was not written. Its p_limits name each limit's key by its
--   position in p_keys (0-based), not by the key itself: [[key position, later points, limit], …].
--
-- The *_many functions stay, unchanged, for servers of the previous release that still call them
-- while a rolling deploy replaces them; the rules they apply are the same (the counters' upsert is
-- restated below, the row insert is signup_subscribers_many itself).

create or replace function public.signup_rate_limit_hit_list(p_keys text[], p_points integer[], p_window_ms integer[])
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
  if random() < 0.001 then
    delete from public.signup_rate_limits where expires_at < now();
  end if;
  with incoming as (
    select t.key, sum(t.points)::integer as points, max(t.window_ms) as window_ms
    from unnest(p_keys, p_points, p_window_ms) as t(key, points, window_ms)
    group by t.key
  ),
  counted as (
    insert into public.signup_rate_limits as c (key, points, expires_at)
    select i.key, i.points, now() + i.window_ms * interval '1 millisecond' from incoming i order by i.key
    on conflict (key) do update
      set points = case when c.expires_at <= now() then excluded.points else c.points + excluded.points end,
          expires_at = case when c.expires_at <= now() then excluded.expires_at else c.expires_at end
    returning c.key, c.points, c.expires_at
  )
  select jsonb_build_object(
    'points', coalesce(jsonb_agg(c.points order by k.position), '[]'::jsonb),
    'ms_left', coalesce(jsonb_agg(greatest(0, floor(extract(epoch from (c.expires_at - now())) * 1000))::bigint order by k.position), '[]'::jsonb)
  )
  into v_counts
  from unnest(p_keys) with ordinality as k(key, position)
  join counted c on c.key = k.key;
  return v_counts;
end
$$;

create or replace function public.signup_counted_list(
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
  v_counts := public.signup_rate_limit_hit_list(p_keys, p_points, p_window_ms);
  select coalesce(array_agg(r.position order by r.position), '{}')
  into v_within
  from generate_subscripts(p_emails, 1) as r(position)
  where not exists (
    select 1
    from jsonb_array_elements(coalesce(p_limits -> (r.position - 1), '[]'::jsonb)) as l(item)
    -- A key without a count (never expected) counts as over its limit.
    where coalesce((v_counts -> 'points' -> (l.item ->> 0)::integer)::integer, 2147483647) - (l.item ->> 1)::integer > (l.item ->> 2)::integer
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
  return v_counts || jsonb_build_object(
    'ids', (select coalesce(jsonb_agg(v_activated -> e.email order by e.position), '[]'::jsonb) from unnest(p_emails) with ordinality as e(email, position))
  );
end
$$;

revoke all on function public.signup_rate_limit_hit_list(text[], integer[], integer[]) from public;
revoke all on function public.signup_counted_list(text[], integer[], integer[], text[], text[], text[], jsonb, jsonb) from public;

do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function public.signup_rate_limit_hit_list(text[], integer[], integer[]) from anon;
    revoke all on function public.signup_counted_list(text[], integer[], integer[], text[], text[], text[], jsonb, jsonb) from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on function public.signup_rate_limit_hit_list(text[], integer[], integer[]) from authenticated;
    revoke all on function public.signup_counted_list(text[], integer[], integer[], text[], text[], text[], jsonb, jsonb) from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant execute on function public.signup_rate_limit_hit_list(text[], integer[], integer[]) to service_role;
    grant execute on function public.signup_counted_list(text[], integer[], integer[], text[], text[], text[], jsonb, jsonb) to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
