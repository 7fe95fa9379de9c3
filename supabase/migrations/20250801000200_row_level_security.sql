-- Row-level security for Supabase. The browser-facing anon key may add a signup and do nothing
-- else; the service role (server and job only) bypasses RLS. On a plain Postgres or PGlite without
-- Supabase's roles, only the RLS switches apply and the grants are skipped.
alter table public.email_signups enable row level security;
alter table public.digest_deliveries enable row level security;
alter table public.digest_locks enable row level security;

do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on public.email_signups from anon;
    revoke all on public.digest_deliveries from anon;
    revoke all on public.digest_locks from anon;
    grant insert (email, source) on public.email_signups to anon;
    if not exists (select 1 from pg_policies where schemaname = 'public' and tablename = 'email_signups' and policyname = 'anon can sign up') then
      create policy "anon can sign up" on public.email_signups for insert to anon with check (true);
    end if;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on public.email_signups from authenticated;
    revoke all on public.digest_deliveries from authenticated;
    revoke all on public.digest_locks from authenticated;
  end if;
end
$$;
