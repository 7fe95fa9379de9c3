-- A claim that ran out unsettled (its worker died mid-batch) counts as a try of unknown outcome, so
-- its message is never sent under a fresh key once the provider has forgotten the old one. But a
-- claim taken while the sender was held (mail_sender_hold, recorded by a refusal and cleared by the
-- next accepted message) could not have gone out: the provider refused every message of that time.
-- Without this, one crash during a long refusal (a revoked key over a weekend) left every message
-- of the crashed batch unknown, never sent, once the hold outlasted the provider's 24 hours.
create or replace function public.outbox_claim(p_limit integer, p_lease_seconds integer, p_key_seconds integer, p_now timestamptz)
returns jsonb
language sql
volatile
security invoker
set search_path = ''
as $$
  with clock as (
    select coalesce(p_now, now()) as at
  ), due as (
    select m.id,
      -- A claim never settled (its worker died or lost the database): its try may have gone out,
      -- unless the sender was held from before the claim began until now.
      m.uncertain or (m.claim_token is not null and not exists (
        select 1 from public.mail_sender_hold h where h.since <= m.lease_until - make_interval(secs => p_lease_seconds)
      )) as uncertain,
      m.key_since is not null and m.key_since <= clock.at - make_interval(secs => p_key_seconds) as key_old
    from public.mail_outbox m, clock
    -- A message never tried is due from when it was queued, on the database's own clock (its
    -- queueing functions know no other), however the worker's clock (another host's, or a test's)
    -- stands; its retries then wait on the worker's clock, which set them.
    where m.state in ('queued', 'retrying')
      and (m.next_attempt_at <= clock.at or (m.attempts = 0 and m.next_attempt_at <= now()))
      and (m.lease_until is null or m.lease_until < clock.at)
    order by m.next_attempt_at, m.id
    limit p_limit
    for update of m skip locked
  ), claimed as (
    update public.mail_outbox m
      set lease_until = clock.at + make_interval(secs => p_lease_seconds),
          attempts = m.attempts + 1,
          claim_token = gen_random_uuid(),
          uncertain = due.uncertain,
          key_generation = case when due.key_old and not due.uncertain then m.key_generation + 1 else m.key_generation end,
          key_since = case when m.key_since is null or (due.key_old and not due.uncertain) then clock.at else m.key_since end
      from due, clock where m.id = due.id
      returning m.id, m.kind, m.subscriber_id, m.payload, m.attempts, m.created_at, m.claim_token, m.key_id,
        m.key_generation, m.uncertain, due.key_old and due.uncertain as key_expired
  )
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', c.id, 'kind', c.kind, 'subscriber_id', c.subscriber_id, 'payload', c.payload,
    'attempts', c.attempts, 'created_at', c.created_at, 'email', e.email, 'status', e.status,
    'claim', c.claim_token, 'key', 'outbox/' || c.key_id::text || '/' || c.key_generation::text,
    'uncertain', c.uncertain, 'key_expired', c.key_expired
  ) order by c.id), '[]'::jsonb)
  from claimed c left join public.email_signups e on e.id::text = c.subscriber_id;
$$;
