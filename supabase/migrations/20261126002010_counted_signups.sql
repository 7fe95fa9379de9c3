-- One statement for a moment's signups: their limit counts and, for the posts within every limit,
-- their rows (server/abuse/rate-limit-batcher.ts). Until now a signup was two round trips, its
-- counts (signup_rate_limit_hit_many) and then its row (signup_subscribers_many), each waking the
-- database; both rules stay where they are and this function only calls them in turn, inside one
-- transaction, so a row is written only if the counts that let it in were taken too.
--
-- p_keys, p_points, p_window_ms: the counts, as for signup_rate_limit_hit_many (each key once).
-- p_emails, p_sources, p_network_hashes, p_address_hashes: the rows, as for signup_subscribers_many
-- (distinct addresses).
-- p_limits: for each row, its limits as JSON [[key, later points, limit], …]: the post is within a
-- limit when the key's new total, less the points counted after it in this batch, is at most the
-- limit (the same count the server answers the limiter with). A row over any limit is left out.
-- Answers {"counts": {key: {"points", "ms_left"}}, "activated": {address: id}}.
create or replace function public.signup_counted_many(
  p_keys text[], p_points integer[], p_window_ms integer[],
  p_emails text[], p_sources text[], p_network_hashes text[], p_address_hashes jsonb, p_limits jsonb
)
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
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

revoke all on function public.signup_counted_many(text[], integer[], integer[], text[], text[], text[], jsonb, jsonb) from public;

do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function public.signup_counted_many(text[], integer[], integer[], text[], text[], text[], jsonb, jsonb) from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on function public.signup_counted_many(text[], integer[], integer[], text[], text[], text[], jsonb, jsonb) from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant execute on function public.signup_counted_many(text[], integer[], integer[], text[], text[], text[], jsonb, jsonb) to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
