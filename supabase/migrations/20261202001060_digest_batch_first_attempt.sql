-- A batch's first attempt is recorded before its request leaves. A run killed between writing a
-- batch and trying it left the batch pending; found more than a day later it became unknown (its
-- key might have been used), and its readers missed the week though nothing had gone out. A batch
-- with no attempt recorded is closed as failed instead, and its readers are planned again under a
-- new key. Batches written before this column existed are taken as tried: nothing says they were
-- not.
do $$
begin
  if not exists (
    select 1 from information_schema.columns
    where table_schema = 'public' and table_name = 'digest_batches' and column_name = 'attempted_at'
  ) then
    alter table public.digest_batches add column attempted_at timestamptz;
    update public.digest_batches set attempted_at = created_at where state in ('pending', 'unknown');
  end if;
end
$$;

-- Right before each attempt: records the first one and answers the batch's state, so the caller
-- sends only while the batch is still in the state it sends from. Null when the batch is gone.
create or replace function public.digest_batch_attempt(p_id bigint, p_at timestamptz)
returns text
language sql
volatile
security invoker
set search_path = ''
as $$
  update public.digest_batches b set attempted_at = coalesce(b.attempted_at, p_at)
    where b.id = p_id
    returning b.state;
$$;

do $$
declare
  f constant text := 'public.digest_batch_attempt(bigint, timestamptz)';
begin
  execute format('revoke all on function %s from public', f);
  if exists (select 1 from pg_roles where rolname = 'anon') then
    execute format('revoke all on function %s from anon', f);
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    execute format('revoke all on function %s from authenticated', f);
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    execute format('grant execute on function %s to service_role', f);
  end if;
end
$$;
