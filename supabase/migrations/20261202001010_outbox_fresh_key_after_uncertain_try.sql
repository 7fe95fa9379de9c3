-- A message whose try had no answer, and whose key the provider is about to forget, was settled
-- `unknown` and never tried again: a second copy was thought worse than none. For the mail the
-- outbox carries that is the wrong way round. A confirmation, a fresh link, a welcome or an
-- operator's notice that never arrives is lost for good (the reader cannot confirm, the operator is
-- not told), while a second copy of one costs a reader a duplicate they can ignore. A server down
-- for a day after a try that timed out lost confirmations this way.
--
-- Now every message whose key is about to expire gets the next key generation and keeps going,
-- and the claim says when the earlier generation's try may have gone out (`repeat_possible`), so
-- the worker can say that a second copy is possible. The weekly digest does not use this table: it
-- keeps its own at-most-once rule for each week.
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
          -- A new key has had no try yet, so nothing under it is uncertain.
          uncertain = due.uncertain and not due.key_old,
          key_generation = case when due.key_old then m.key_generation + 1 else m.key_generation end,
          key_since = case when m.key_since is null or due.key_old then clock.at else m.key_since end
      from due, clock where m.id = due.id
      returning m.id, m.kind, m.subscriber_id, m.payload, m.attempts, m.created_at, m.claim_token, m.key_id,
        m.key_generation, m.uncertain, due.key_old and due.uncertain as repeat_possible
  )
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', c.id, 'kind', c.kind, 'subscriber_id', c.subscriber_id, 'payload', c.payload,
    'attempts', c.attempts, 'created_at', c.created_at, 'email', e.email, 'status', e.status,
    'claim', c.claim_token, 'key', 'outbox/' || c.key_id::text || '/' || c.key_generation::text,
    'uncertain', c.uncertain, 'repeat_possible', c.repeat_possible
  ) order by c.id), '[]'::jsonb)
  from claimed c left join public.email_signups e on e.id::text = c.subscriber_id;
$$;
