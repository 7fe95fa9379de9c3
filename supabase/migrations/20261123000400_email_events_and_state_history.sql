-- What the operator's report (npm run report) reads besides the subscriber list and the ledger.
--
-- email_events: every event the Resend webhook received, as received (type, the provider's message
-- id, when it happened; the subscriber by id, never the address). Bounces and complaints are
-- attributed to a recap through digest_deliveries.provider_message_id. svix_id is the delivery's
-- own id: a replay is stored once.
create table if not exists public.email_events (
  id bigint generated always as identity primary key,
  svix_id text not null unique,
  event_type text not null,
  provider_message_id text,
  subscriber_id text,
  occurred_at timestamptz not null,
  received_at timestamptz not null default now()
);
create index if not exists email_events_message_idx on public.email_events (provider_message_id) where provider_message_id is not null;
create index if not exists email_events_subscriber_idx on public.email_events (subscriber_id, occurred_at);
-- The report reads the ledger by message id, to attribute an event to its recap.
create index if not exists digest_deliveries_message_idx on public.digest_deliveries (provider_message_id) where provider_message_id is not null;

-- subscriber_state_history: one row each time a subscriber's state changes, written by the
-- database itself (triggers below), so every path that changes a row (signup, confirmation,
-- unsubscribe, webhook, any backend, a hand-written UPDATE) is recorded the same way. The list
-- keeps only the current state; the weekly chart needs the past.
create table if not exists public.subscriber_state_history (
  id bigint generated always as identity primary key,
  subscriber_id text not null,
  state text not null,
  changed_at timestamptz not null default now()
);
create index if not exists subscriber_state_history_subscriber_idx on public.subscriber_state_history (subscriber_id, changed_at);

-- A row's state: its status column where the table has one, else what unsubscribed_at and the
-- reason say. Read through to_jsonb so the same function fits either shape of the table.
create or replace function public.subscriber_state_of(p_row jsonb)
returns text
language sql
immutable
set search_path = ''
as $$
  select coalesce(
    p_row->>'status',
    case when p_row->>'unsubscribed_at' is null then 'active' else coalesce(p_row->>'unsubscribe_reason', 'unsubscribed') end
  );
$$;

-- Statement-level with transition tables: a signup statement of thousands of rows costs one
-- INSERT ... SELECT, not a trigger call per row. Security definer, as the anon role that inserts a
-- signup may not write the history itself.
create or replace function public.record_subscriber_states()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    insert into public.subscriber_state_history (subscriber_id, state)
    select n.id::text, public.subscriber_state_of(to_jsonb(n)) from new_rows n;
  else
    insert into public.subscriber_state_history (subscriber_id, state)
    select n.id::text, public.subscriber_state_of(to_jsonb(n))
    from new_rows n join old_rows o on o.id = n.id
    where public.subscriber_state_of(to_jsonb(n)) is distinct from public.subscriber_state_of(to_jsonb(o));
  end if;
  return null;
end;
$$;

drop trigger if exists email_signups_state_insert on public.email_signups;
create trigger email_signups_state_insert after insert on public.email_signups
  referencing new table as new_rows for each statement execute function public.record_subscriber_states();
drop trigger if exists email_signups_state_update on public.email_signups;
create trigger email_signups_state_update after update on public.email_signups
  referencing old table as old_rows new table as new_rows for each statement execute function public.record_subscriber_states();

-- Rows from before this migration: joined at created_at (pending if they still are), left at
-- unsubscribed_at. Only when the history is still empty, so a rerun adds nothing.
insert into public.subscriber_state_history (subscriber_id, state, changed_at)
select id::text, case when public.subscriber_state_of(to_jsonb(e)) = 'pending' then 'pending' else 'active' end, created_at
from public.email_signups e
where not exists (select 1 from public.subscriber_state_history)
union all
select id::text, coalesce(unsubscribe_reason, 'unsubscribed'), unsubscribed_at from public.email_signups
where unsubscribed_at is not null and (resubscribed_at is null or resubscribed_at < unsubscribed_at)
  and not exists (select 1 from public.subscriber_state_history);

alter table public.email_events enable row level security;
alter table public.subscriber_state_history enable row level security;
revoke all on function public.record_subscriber_states() from public;

do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on public.email_events from anon;
    revoke all on public.subscriber_state_history from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on public.email_events from authenticated;
    revoke all on public.subscriber_state_history from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant select, insert on public.email_events to service_role;
    grant select on public.subscriber_state_history to service_role;
  end if;
end
$$;
