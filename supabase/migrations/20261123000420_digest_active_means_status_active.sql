-- Who the digest writes to (digest_active_subscribers, from the digest-batches migration) was
-- "unsubscribed_at is null", written before pending signups existed: an address still awaiting its
-- confirmation matches that too, and got the Monday e-mail. The status column (subscriber-status
-- migration) decides it in one place; the view, and so every digest function, now reads it.
create or replace view public.digest_active_subscribers with (security_invoker = true) as
  select s.id::text as id, s.email from public.email_signups s where s.status = 'active';
