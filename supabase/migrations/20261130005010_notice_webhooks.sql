-- NOTICE_WEBHOOK_URL: every operator notice is also posted to a chat webhook as {"text": ...}. The
-- post is queued here by a trigger on the outbox row that records the notice, so every path that
-- tells the operator (the digest's notices, the outbox's sender hold, any later one) queues it in
-- the same transaction, and none has to know the webhook exists. Its own worker
-- (server/notices/webhook-worker.ts) claims rows under a lease and settles them, as the mail outbox
-- does, but never through the mail provider: a provider outage is when the chat matters most.
-- Without NOTICE_WEBHOOK_URL nothing claims the rows; a notice older than the claim's age limit is
-- closed as expired rather than posted late, so setting the URL later does not replay old news.
create table if not exists public.notice_webhooks (
  id bigint generated always as identity primary key,
  text text not null,
  state text not null default 'queued' check (state in ('queued', 'retrying', 'sent', 'expired')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  lease_until timestamptz,
  last_error text,
  created_at timestamptz not null default now(),
  settled_at timestamptz
);
create index if not exists notice_webhooks_due_idx on public.notice_webhooks (next_attempt_at, id) where state in ('queued', 'retrying');
alter table public.notice_webhooks enable row level security;

create or replace function public.notice_webhook_from_outbox()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
begin
  insert into public.notice_webhooks (text)
  values (concat_ws(E'\n\n', nullif(new.payload ->> 'subject', ''), nullif(new.payload ->> 'text', '')));
  return new;
end
$$;

drop trigger if exists notice_webhook_from_outbox on public.mail_outbox;
create trigger notice_webhook_from_outbox
  after insert on public.mail_outbox
  for each row when (new.kind = 'operator')
  execute function public.notice_webhook_from_outbox();

-- Up to p_limit due posts, each leased for p_lease_seconds: [{id, text, attempts, created_at}].
-- Open rows older than p_max_age_seconds are closed as expired first, and closed rows older than
-- 90 days (RETENTION_DAYS' default) are dropped: a few notices a week, so the table stays small.
create or replace function public.notice_webhook_claim(p_limit integer, p_lease_seconds integer, p_max_age_seconds integer)
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  claimed jsonb;
begin
  update public.notice_webhooks w
     set state = 'expired', settled_at = now(), lease_until = null,
         last_error = coalesce(w.last_error, 'never claimed') || ' (too old to post)'
   where w.state in ('queued', 'retrying')
     and w.created_at < now() - make_interval(secs => p_max_age_seconds)
     and (w.lease_until is null or w.lease_until < now());
  delete from public.notice_webhooks w where w.state in ('sent', 'expired') and w.created_at < now() - interval '90 days';
  with due as (
    select w.id from public.notice_webhooks w
    where w.state in ('queued', 'retrying') and w.next_attempt_at <= now()
      and (w.lease_until is null or w.lease_until < now())
    order by w.next_attempt_at, w.id
    limit greatest(p_limit, 0)
    for update skip locked
  ), taken as (
    update public.notice_webhooks w
       set attempts = w.attempts + 1,
           lease_until = now() + make_interval(secs => p_lease_seconds)
      from due where w.id = due.id
    returning w.id, w.text, w.attempts, w.created_at
  )
  select coalesce(jsonb_agg(jsonb_build_object('id', t.id, 'text', t.text, 'attempts', t.attempts, 'created_at', t.created_at) order by t.id), '[]'::jsonb)
    into claimed from taken t;
  return claimed;
end
$$;

-- Settles a claimed post: sent, or retrying after p_retry_seconds. False when it was not open.
create or replace function public.notice_webhook_settle(p_id bigint, p_state text, p_error text, p_retry_seconds integer)
returns boolean
language plpgsql
volatile
security invoker
set search_path = ''
as $$
begin
  if p_state not in ('sent', 'retrying') then
    raise exception 'notice_webhook_settle: state must be sent or retrying, not %', p_state using errcode = '22023';
  end if;
  update public.notice_webhooks w
     set state = p_state,
         lease_until = null,
         last_error = case when p_state = 'sent' then w.last_error else left(p_error, 500) end,
         next_attempt_at = case when p_state = 'retrying' then now() + make_interval(secs => greatest(coalesce(p_retry_seconds, 0), 0)) else w.next_attempt_at end,
         settled_at = case when p_state = 'sent' then now() else null end
   where w.id = p_id and w.state in ('queued', 'retrying');
  return found;
end
$$;

do $$
declare
  fn text;
  fns text[] := array[
    'public.notice_webhook_claim(integer, integer, integer)',
    'public.notice_webhook_settle(bigint, text, text, integer)',
    'public.notice_webhook_from_outbox()'
  ];
begin
  foreach fn in array fns loop
    execute format('revoke all on function %s from public', fn);
    if exists (select 1 from pg_roles where rolname = 'anon') then
      execute format('revoke all on function %s from anon', fn);
    end if;
    if exists (select 1 from pg_roles where rolname = 'authenticated') then
      execute format('revoke all on function %s from authenticated', fn);
    end if;
    if exists (select 1 from pg_roles where rolname = 'service_role') then
      execute format('grant execute on function %s to service_role', fn);
    end if;
  end loop;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on public.notice_webhooks from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on public.notice_webhooks from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant select, insert, update, delete on public.notice_webhooks to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
