-- A DIGEST_CRON tick that fell while no server ran is dealt with once, by the
-- first server back: run late (within DIGEST_CATCHUP_HOURS) or told as missed. Replicas starting
-- together each try to claim the tick; the primary key lets exactly one of them win, and the row
-- keeps a restart a minute later from running or telling it again.
create table if not exists public.digest_tick_claims (
  tick timestamptz primary key,
  holder text not null,
  claimed_at timestamptz not null default now()
);
alter table public.digest_tick_claims enable row level security;

-- True for the one caller that claimed the tick; false for every other, ever.
create or replace function public.digest_claim_tick(p_tick timestamptz, p_holder text)
returns boolean
language sql
volatile
security invoker
set search_path = ''
as $$
  with claimed as (
    insert into public.digest_tick_claims (tick, holder) values (p_tick, p_holder)
      on conflict (tick) do nothing
    returning 1
  )
  select exists (select 1 from claimed);
$$;

do $$
begin
  revoke all on function public.digest_claim_tick(timestamptz, text) from public;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function public.digest_claim_tick(timestamptz, text) from anon;
    revoke all on public.digest_tick_claims from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on function public.digest_claim_tick(timestamptz, text) from authenticated;
    revoke all on public.digest_tick_claims from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant execute on function public.digest_claim_tick(timestamptz, text) to service_role;
    grant select, insert on public.digest_tick_claims to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
