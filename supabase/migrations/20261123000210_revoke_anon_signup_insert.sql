-- The anon key is public by design (the old site shipped it in its browser bundle). Until now it
-- could insert a signup straight into email_signups over the REST interface, skipping everything
-- the server checks: the honeypot, the per-address and per-e-mail limits, the disposable-domain
-- list and confirmation by e-mail. The server writes with the service key, so the anon role gets
-- nothing at all on this table any more: a direct insert is refused (42501), not merely tidied up.
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on public.email_signups from anon;
  end if;
end
$$;
drop policy if exists "anon can sign up" on public.email_signups;

notify pgrst, 'reload schema';
