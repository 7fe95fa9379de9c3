-- Many counters in one statement: the hits a server gathers in one turn of its event loop, each key
-- once with the sum of its points (server/abuse/rate-limit-batcher.ts). Without it a burst of
-- signups from one address (or many behind one proxy) is a queue of single-row upserts, each
-- waiting for the row lock the previous one holds; measured in bench/RESULTS.md. Keys are taken in
-- their sort order, so two replicas' batches always lock rows in the same order and cannot deadlock.
create or replace function public.signup_rate_limit_hit_many(p_keys text[], p_points integer[], p_window_ms integer[])
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  counts jsonb;
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
  select coalesce(jsonb_object_agg(key, jsonb_build_object('points', points, 'ms_left', greatest(0, floor(extract(epoch from (expires_at - now())) * 1000))::bigint)), '{}'::jsonb)
  into counts
  from counted;
  return counts;
end
$$;

revoke all on function public.signup_rate_limit_hit_many(text[], integer[], integer[]) from public;

do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function public.signup_rate_limit_hit_many(text[], integer[], integer[]) from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on function public.signup_rate_limit_hit_many(text[], integer[], integer[]) from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant execute on function public.signup_rate_limit_hit_many(text[], integer[], integer[]) to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
