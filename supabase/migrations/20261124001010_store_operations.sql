-- The rest of the store's operations as functions, so that every backend runs the same SQL: the
-- SQL store calls them as `select public.fn(…)`, the Supabase store through /rest/v1/rpc, and
-- neither writes a statement or a REST filter of its own (server/store/*.ts). Each returns jsonb
-- (a scalar, which PostgREST passes through unchanged) or a plain value.
--
-- "Active" stays defined once, by the view digest_active_subscribers
-- (20261123000420_digest_active_means_status_active.sql): the record below, the welcome claim and
-- the digest functions all ask it.

-- One subscriber as every read answers it.
create or replace function public.subscriber_json(e public.email_signups)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select jsonb_build_object(
    'id', e.id::text,
    'email', e.email,
    'status', e.status,
    'active', exists (select 1 from public.digest_active_subscribers a where a.id = e.id::text),
    'created_at', e.created_at);
$$;

create or replace function public.subscriber_by_id(p_id text)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select public.subscriber_json(e) from public.email_signups e where e.id::text = p_id;
$$;

-- p_email is already normalised by the caller (the table keeps addresses trimmed and lower-cased).
create or replace function public.subscriber_by_email(p_email text)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select public.subscriber_json(e) from public.email_signups e where e.email = p_email;
$$;

-- Up to p_limit subscribers after p_after in id order (as text, so uuid and integer ids page
-- alike); only the active ones when p_active_only.
create or replace function public.list_subscribers(p_after text, p_limit integer, p_active_only boolean default false)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select coalesce(jsonb_agg(public.subscriber_json(page) order by page.id::text), '[]'::jsonb)
  from (
    select e.* from public.email_signups e
    where (p_after is null or e.id::text > p_after)
      and (not p_active_only or e.id::text in (select a.id from public.digest_active_subscribers a))
    order by e.id::text
    limit p_limit
  ) page;
$$;

-- Subscribers by state: {"active": n, "pending": n, …} (states without a row are left out).
create or replace function public.count_subscribers()
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select coalesce(jsonb_object_agg(c.status, c.n), '{}'::jsonb)
  from (select e.status, count(*)::int as n from public.email_signups e group by e.status) c;
$$;

-- Everything kept about one subscriber, for their own page and "download my data"; null when
-- there is none.
create or replace function public.subscriber_details(p_id text)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select public.subscriber_json(e) || jsonb_build_object(
    'status_changed_at', e.status_changed_at,
    'source', e.source,
    'resubscribed_at', e.resubscribed_at,
    'confirmed_at', e.confirmed_at,
    'unsubscribed_at', e.unsubscribed_at,
    'signup_ip_hash', e.signup_ip_hash,
    'confirm_ip_hash', e.confirm_ip_hash,
    'welcomed_at', e.welcomed_at,
    'deliveries', (
      select coalesce(jsonb_agg(jsonb_build_object('recap_date', to_char(d.recap_date, 'YYYY-MM-DD'), 'sent_at', d.sent_at) order by d.recap_date), '[]'::jsonb)
      from public.digest_deliveries d where d.subscriber_id = p_id))
  from public.email_signups e where e.id::text = p_id;
$$;

-- Gives back the confirmation throttle a signup claimed, when its e-mail could not be sent.
create or replace function public.release_confirmation(p_id text)
returns void
language sql
volatile
security invoker
set search_path = ''
as $$
  update public.email_signups e set confirmation_sent_at = null where e.id::text = p_id;
$$;

-- The welcome e-mail is due once per address ever: true only for the first caller, and only
-- while the subscriber is active.
create or replace function public.claim_welcome(p_id text)
returns boolean
language sql
volatile
security invoker
set search_path = ''
as $$
  with claimed as (
    update public.email_signups e set welcomed_at = now()
    where e.id::text = p_id and e.welcomed_at is null
      and exists (select 1 from public.digest_active_subscribers a where a.id = p_id)
    returning 1
  )
  select exists (select 1 from claimed);
$$;

-- Single mode's fast path for many signups at once (server/store/signup-batcher.ts): rows with
-- distinct addresses inserted in the order given; an address the reader had left (or that waited
-- for a confirmation) is activated again. Addresses on the suppression list, and rows already
-- there in any other state, are left out: signup_subscriber decides those. Answers
-- {"address": "id", …} for the addresses this call made active.
create or replace function public.signup_subscribers_many(
  p_emails text[], p_sources text[], p_network_hashes text[], p_hashes text[], p_previous_hashes text[]
)
returns jsonb
language sql
volatile
security invoker
set search_path = ''
as $$
  with activated as (
    insert into public.email_signups as e (email, source, signup_ip_hash)
    select incoming.email, incoming.source, incoming.network_hash
    from unnest(p_emails, p_sources, p_network_hashes, p_hashes, p_previous_hashes)
      with ordinality as incoming(email, source, network_hash, hash, previous_hash, position)
    where not exists (
      select 1 from public.subscriber_suppressions s where s.address_hash in (incoming.hash, incoming.previous_hash)
    )
    order by incoming.position
    on conflict (email) do update
      set unsubscribed_at = null, unsubscribe_reason = null, pending_since = null, status_changed_at = now(),
          resubscribed_at = case when e.status = 'unsubscribed' then now() else e.resubscribed_at end,
          source = excluded.source, signup_ip_hash = excluded.signup_ip_hash
      where e.status in ('unsubscribed', 'pending')
    returning e.id::text as id, e.email
  )
  select coalesce(jsonb_object_agg(a.email, a.id), '{}'::jsonb) from activated a;
$$;

-- The delivery ledger: how many messages of a recap the provider accepted.
create or replace function public.digest_count_deliveries(p_recap_date date)
returns integer
language sql
stable
security invoker
set search_path = ''
as $$
  select count(*)::int from public.digest_deliveries d where d.recap_date = p_recap_date;
$$;

-- The ledger read and written outside a batch: of p_subscriber_ids (a JSON array), those with a
-- delivery of the recap; and deliveries recorded as [{"id": …, "provider_id": …}], an existing
-- row kept. The digest itself records through digest_settle_batch; tests shape the ledger with these.
create or replace function public.digest_delivered_to(p_recap_date date, p_subscriber_ids jsonb)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select coalesce(jsonb_agg(d.subscriber_id), '[]'::jsonb)
  from public.digest_deliveries d
  where d.recap_date = p_recap_date and d.subscriber_id in (select jsonb_array_elements_text(p_subscriber_ids));
$$;

create or replace function public.digest_record_deliveries(p_recap_date date, p_deliveries jsonb)
returns void
language sql
volatile
security invoker
set search_path = ''
as $$
  insert into public.digest_deliveries (recap_date, subscriber_id, provider_message_id)
  select p_recap_date, d ->> 'id', d ->> 'provider_id' from jsonb_array_elements(p_deliveries) d
  on conflict (recap_date, subscriber_id) do nothing;
$$;

-- One webhook event; a second delivery with the same svix id changes nothing.
create or replace function public.record_email_event(
  p_svix_id text, p_event_type text, p_provider_message_id text, p_subscriber_id text, p_occurred_at timestamptz
)
returns void
language sql
volatile
security invoker
set search_path = ''
as $$
  insert into public.email_events (svix_id, event_type, provider_message_id, subscriber_id, occurred_at)
  values (p_svix_id, p_event_type, p_provider_message_id, p_subscriber_id, p_occurred_at)
  on conflict (svix_id) do nothing;
$$;

-- Grants: the server and the job (service role) only, as for every other store function.
do $$
declare
  fn text;
  functions text[] := array[
    'public.subscriber_json(public.email_signups)',
    'public.subscriber_by_id(text)',
    'public.subscriber_by_email(text)',
    'public.list_subscribers(text, integer, boolean)',
    'public.count_subscribers()',
    'public.subscriber_details(text)',
    'public.release_confirmation(text)',
    'public.claim_welcome(text)',
    'public.signup_subscribers_many(text[], text[], text[], text[], text[])',
    'public.digest_count_deliveries(date)',
    'public.digest_delivered_to(date, jsonb)',
    'public.digest_record_deliveries(date, jsonb)',
    'public.record_email_event(text, text, text, text, timestamptz)'];
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
end
$$;

notify pgrst, 'reload schema';
