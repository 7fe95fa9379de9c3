-- The Monday e-mail's footer offers each reader their own share link: the digest's next recipients
-- carry their share code (digest_recipients, which rebuilds a stored batch, carries it since
-- 20261201002010). The code is read only for the page of rows returned, by primary key.
create or replace function public.digest_undelivered(p_recap_date date, p_after text, p_limit integer)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select coalesce(jsonb_agg(jsonb_build_object(
           'id', page.id, 'email', page.email,
           'share_code', (select s.share_code from public.email_signups s where s.id = page.id::uuid)
         ) order by page.id), '[]'::jsonb)
  from (
    select a.id, a.email
    from public.digest_active_subscribers a
    where a.id > coalesce(p_after, '')
      -- One probe of the ledger's primary key per candidate: `offset 0` keeps this a subquery run per row.
      and not exists (select 1 from public.digest_deliveries d where d.recap_date = p_recap_date and d.subscriber_id = a.id offset 0)
      and not exists (
        select 1 from public.digest_batches b
        where b.recap_date = p_recap_date and b.state in ('pending', 'unknown') and a.id = any (b.subscriber_ids))
    order by a.id
    limit p_limit
  ) page;
$$;

do $$
begin
  revoke all on function public.digest_undelivered(date, text, integer) from public;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function public.digest_undelivered(date, text, integer) from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on function public.digest_undelivered(date, text, integer) from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant execute on function public.digest_undelivered(date, text, integer) to service_role;
  end if;
end
$$;
