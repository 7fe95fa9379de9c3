-- Write-ahead batches and the run history of the Monday job.
--
-- A batch row is committed before its messages go to the provider, and settled (sent, failed) in
-- one transaction with its ledger rows after the provider answered. A rerun finds the batches left
-- pending by a crash and settles them before planning anything new, with the stored idempotency
-- key, recipients and content, so the provider answers a repeat from its cache instead of sending
-- again. The content is stored once per distinct rendering (the template with a marker where each
-- subscriber's unsubscribe link goes), not per message.
--
-- Every statement the job runs on these tables is a function below: the SQL store calls them
-- directly and the Supabase store through /rest/v1/rpc, so the three backends share one
-- implementation. They return jsonb (a scalar), which PostgREST passes through unchanged.

-- Who the digest may write to, in one place: the functions below use nothing else to decide
-- whether a subscriber is active.
create or replace view public.digest_active_subscribers with (security_invoker = true) as
  select s.id::text as id, s.email from public.email_signups s where s.unsubscribed_at is null;

create table if not exists public.digest_contents (
  content_hash text primary key,
  recap_date date not null,
  sender text not null,
  site_url text not null,
  -- A hash of UNSUBSCRIBE_SECRET, never the secret: links can be rebuilt only with the same one.
  secret_fingerprint text not null,
  subject text not null,
  html text not null,
  body_text text not null,
  created_at timestamptz not null default now()
);

create table if not exists public.digest_runs (
  id bigint generated always as identity primary key,
  kind text not null check (kind in ('scheduled', 'manual', 'test', 'dry-run', 'settle')),
  started_at timestamptz not null,
  finished_at timestamptz,
  recap_date date,
  -- Null while running; a row that stays null belongs to a run that was killed.
  outcome text,
  sent integer not null default 0,
  failed integer not null default 0,
  skipped_already_sent integer not null default 0,
  skipped_left integer not null default 0,
  unknown_batches integer not null default 0,
  message text
);
create index if not exists digest_runs_started_idx on public.digest_runs (started_at desc, id desc);

create table if not exists public.digest_batches (
  id bigint generated always as identity primary key,
  recap_date date not null,
  sequence integer not null,
  idempotency_key text not null unique,
  -- In the order the messages go to the provider; the same order gives the same request body.
  subscriber_ids text[] not null,
  content_hash text not null references public.digest_contents (content_hash),
  state text not null default 'pending' check (state in ('pending', 'sent', 'failed', 'unknown', 'skipped')),
  -- Parallel to subscriber_ids once sent: the provider's message id, or null where it refused one.
  provider_ids text[],
  -- Why it failed or is unknown: {"reason": ..., "recipients": [{"id": ..., "reason": ...}]}.
  failure jsonb,
  run_id bigint references public.digest_runs (id),
  created_at timestamptz not null,
  settled_at timestamptz,
  unique (recap_date, sequence)
);
-- Open batches are few (a crash leaves one, rarely more); planning excludes their members.
create index if not exists digest_batches_open_idx on public.digest_batches (recap_date) where state in ('pending', 'unknown');

alter table public.digest_contents enable row level security;
alter table public.digest_runs enable row level security;
alter table public.digest_batches enable row level security;

create or replace function public.digest_save_content(
  p_content_hash text, p_recap_date date, p_sender text, p_site_url text, p_secret_fingerprint text,
  p_subject text, p_html text, p_body_text text)
returns jsonb
language sql
volatile
security invoker
set search_path = ''
as $$
  with saved as (
    insert into public.digest_contents (content_hash, recap_date, sender, site_url, secret_fingerprint, subject, html, body_text)
    values (p_content_hash, p_recap_date, p_sender, p_site_url, p_secret_fingerprint, p_subject, p_html, p_body_text)
    on conflict (content_hash) do nothing
    returning 1
  )
  select to_jsonb(exists (select 1 from saved));
$$;

create or replace function public.digest_content(p_content_hash text)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select to_jsonb(c) - 'created_at' from public.digest_contents c where c.content_hash = p_content_hash;
$$;

-- The next page of subscribers to plan batches from: active now, without this recap in the ledger,
-- and not already in an open (pending or unknown) batch of it.
create or replace function public.digest_undelivered(p_recap_date date, p_after text, p_limit integer)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select coalesce(jsonb_agg(jsonb_build_object('id', page.id, 'email', page.email) order by page.id), '[]'::jsonb)
  from (
    select a.id, a.email
    from public.digest_active_subscribers a
    where (p_after is null or a.id > p_after)
      and not exists (select 1 from public.digest_deliveries d where d.recap_date = p_recap_date and d.subscriber_id = a.id)
      and not exists (
        select 1 from public.digest_batches b
        where b.recap_date = p_recap_date and b.state in ('pending', 'unknown') and a.id = any (b.subscriber_ids))
    order by a.id
    limit p_limit
  ) page;
$$;

-- Writes a pending batch of those given who are still active and not yet served, in the order
-- given, in one statement: whoever left before this moment is never in a batch. Null when nobody
-- is left.
create or replace function public.digest_write_batch(
  p_recap_date date, p_run_id bigint, p_idempotency_key text, p_content_hash text, p_subscriber_ids jsonb, p_created_at timestamptz)
returns jsonb
language sql
volatile
security invoker
set search_path = ''
as $$
  with wanted as (
    select w.id, w.position
    from jsonb_array_elements_text(p_subscriber_ids) with ordinality as w(id, position)
  ),
  kept as (
    select wanted.id, wanted.position
    from wanted
    join public.digest_active_subscribers a on a.id = wanted.id
    where not exists (select 1 from public.digest_deliveries d where d.recap_date = p_recap_date and d.subscriber_id = wanted.id)
      and not exists (
        select 1 from public.digest_batches b
        where b.recap_date = p_recap_date and b.state in ('pending', 'unknown') and wanted.id = any (b.subscriber_ids))
  ),
  written as (
    insert into public.digest_batches (recap_date, sequence, idempotency_key, subscriber_ids, content_hash, run_id, created_at)
    select p_recap_date,
           coalesce((select max(b.sequence) from public.digest_batches b where b.recap_date = p_recap_date), 0) + 1,
           p_idempotency_key,
           array(select kept.id from kept order by kept.position),
           p_content_hash, p_run_id, p_created_at
    where exists (select 1 from kept)
    returning *
  )
  select to_jsonb(written) from written;
$$;

-- Pending and unknown batches, oldest first; of one recap, or of all when p_recap_date is null.
create or replace function public.digest_open_batches(p_recap_date date)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select coalesce(jsonb_agg(to_jsonb(b) order by b.recap_date, b.sequence), '[]'::jsonb)
  from public.digest_batches b
  where b.state in ('pending', 'unknown') and (p_recap_date is null or b.recap_date = p_recap_date);
$$;

create or replace function public.digest_batch(p_id bigint)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select to_jsonb(b) from public.digest_batches b where b.id = p_id;
$$;

-- Closes an open batch and writes the ledger rows of its recipients in one transaction (a function
-- call is one statement). 'sent': a row for each accepted recipient (p_accepted: [{"id": …,
-- "provider_id": … or null}]); 'skipped': the operator said it went out, a row without provider id
-- for every recipient; 'failed': none. False when the batch was not open (another run settled it):
-- nothing changes.
create or replace function public.digest_settle_batch(
  p_id bigint, p_state text, p_accepted jsonb, p_failure jsonb, p_settled_at timestamptz)
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  closed public.digest_batches;
begin
  if p_state not in ('sent', 'failed', 'skipped') then
    raise exception 'digest_settle_batch: state must be sent, failed or skipped, not %', p_state using errcode = '22023';
  end if;
  update public.digest_batches b
     set state = p_state,
         provider_ids = case when p_state = 'sent' then array(
           select (select a ->> 'provider_id' from jsonb_array_elements(p_accepted) a where a ->> 'id' = m.id limit 1)
           from unnest(b.subscriber_ids) with ordinality as m(id, n) order by m.n) end,
         failure = p_failure,
         settled_at = p_settled_at
   where b.id = p_id and b.state in ('pending', 'unknown')
   returning * into closed;
  if not found then
    return to_jsonb(false);
  end if;
  insert into public.digest_deliveries (recap_date, subscriber_id, provider_message_id, sent_at)
  select closed.recap_date, m.id, a.provider_id, p_settled_at
  from unnest(closed.subscriber_ids) as m(id)
  left join (
    select e ->> 'id' as id, e ->> 'provider_id' as provider_id from jsonb_array_elements(coalesce(p_accepted, '[]'::jsonb)) e
  ) a on a.id = m.id
  where p_state = 'skipped' or (p_state = 'sent' and a.id is not null)
  on conflict (recap_date, subscriber_id) do nothing;
  return to_jsonb(true);
end
$$;

create or replace function public.digest_mark_unknown(p_id bigint, p_reason text)
returns jsonb
language sql
volatile
security invoker
set search_path = ''
as $$
  with marked as (
    update public.digest_batches b set state = 'unknown', failure = jsonb_build_object('reason', p_reason)
    where b.id = p_id and b.state in ('pending', 'unknown')
    returning 1
  )
  select to_jsonb(exists (select 1 from marked));
$$;

-- Addresses of a stored batch's recipients, whatever their state now (a stored batch is resent as
-- it was written). One query per batch.
create or replace function public.digest_recipients(p_subscriber_ids jsonb)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select coalesce(jsonb_agg(jsonb_build_object(
           'id', s.id::text, 'email', s.email,
           'active', exists (select 1 from public.digest_active_subscribers a where a.id = s.id::text))), '[]'::jsonb)
  from public.email_signups s
  where s.id::text in (select jsonb_array_elements_text(p_subscriber_ids));
$$;

create or replace function public.digest_start_run(p_kind text, p_started_at timestamptz)
returns jsonb
language sql
volatile
security invoker
set search_path = ''
as $$
  with started as (
    insert into public.digest_runs (kind, started_at) values (p_kind, p_started_at) returning id
  )
  select to_jsonb(id) from started;
$$;

create or replace function public.digest_finish_run(
  p_id bigint, p_recap_date date, p_outcome text, p_sent integer, p_failed integer, p_skipped_already_sent integer,
  p_skipped_left integer, p_unknown_batches integer, p_message text, p_finished_at timestamptz)
returns jsonb
language sql
volatile
security invoker
set search_path = ''
as $$
  with finished as (
    update public.digest_runs
       set recap_date = p_recap_date, outcome = p_outcome, sent = p_sent, failed = p_failed,
           skipped_already_sent = p_skipped_already_sent, skipped_left = p_skipped_left,
           unknown_batches = p_unknown_batches, message = p_message, finished_at = p_finished_at
     where id = p_id
     returning 1
  )
  select to_jsonb(exists (select 1 from finished));
$$;

create or replace function public.digest_recent_runs(p_limit integer)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select coalesce(jsonb_agg(to_jsonb(r) order by r.started_at desc, r.id desc), '[]'::jsonb)
  from (select * from public.digest_runs order by started_at desc, id desc limit p_limit) r;
$$;

-- Grants: the server and the job (service role) only, as for the lease functions.
do $$
declare
  fn text;
  functions text[] := array[
    'public.digest_save_content(text, date, text, text, text, text, text, text)',
    'public.digest_content(text)',
    'public.digest_undelivered(date, text, integer)',
    'public.digest_write_batch(date, bigint, text, text, jsonb, timestamptz)',
    'public.digest_open_batches(date)',
    'public.digest_batch(bigint)',
    'public.digest_settle_batch(bigint, text, jsonb, jsonb, timestamptz)',
    'public.digest_mark_unknown(bigint, text)',
    'public.digest_recipients(jsonb)',
    'public.digest_start_run(text, timestamptz)',
    'public.digest_finish_run(bigint, date, text, integer, integer, integer, integer, integer, text, timestamptz)',
    'public.digest_recent_runs(integer)'];
begin
  foreach fn in array functions loop
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
    revoke all on public.digest_active_subscribers, public.digest_contents, public.digest_runs, public.digest_batches from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on public.digest_active_subscribers, public.digest_contents, public.digest_runs, public.digest_batches from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant select on public.digest_active_subscribers to service_role;
    grant select, insert on public.digest_contents to service_role;
    grant select, insert, update on public.digest_runs, public.digest_batches to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
