-- What readers clicked, each week, without tracking anyone (docs/clicks.md).
--
-- link_clicks: the site's own count of the e-mail's /go/ links, per recap and entry ('1'..'10' for
-- the launches by rank, 'page' for the recap's page on the site). Only the count: no time, no
-- address, no subscriber.
create table if not exists public.link_clicks (
  recap_date date not null,
  entry text not null check (entry ~ '^([1-9]|10|page)$'),
  clicks bigint not null check (clicks >= 0),
  primary key (recap_date, entry)
);

-- link_click_window: the clicks of the last few minutes, so a repeat from one client address is
-- counted once. A row is a keyed hash (HMAC under a key derived from UNSUBSCRIBE_SECRET) of the
-- address, recap and entry, and the moment it stops mattering; rows past it are deleted by the
-- next click. Kept in the database, not in a server's memory, so three replicas and a restart
-- share one window.
create table if not exists public.link_click_window (
  click_key text primary key,
  expires_at timestamptz not null
);
create index if not exists link_click_window_expires_idx on public.link_click_window (expires_at);

-- email_engagement: Resend's email.delivered, email.opened and email.clicked events, counted per
-- recap (the message's `recap` tag). The events themselves are not kept: no message id, no
-- recipient, no subscriber, so nothing here can be traced back to a reader, deleted or not.
create table if not exists public.email_engagement (
  recap_date date not null,
  event_type text not null check (event_type in ('email.delivered', 'email.opened', 'email.clicked')),
  events bigint not null check (events >= 0),
  primary key (recap_date, event_type)
);

-- email_engagement_receipts: the svix-id of each webhook delivery counted above, so a delivery
-- Resend sends again is counted once. Svix gives up retrying after about a day and a half, so a
-- week's receipts are enough; older ones are deleted by the next event.
create table if not exists public.email_engagement_receipts (
  svix_id text primary key,
  received_at timestamptz not null
);
create index if not exists email_engagement_receipts_received_idx on public.email_engagement_receipts (received_at);

alter table public.link_clicks enable row level security;
alter table public.link_click_window enable row level security;
alter table public.email_engagement enable row level security;
alter table public.email_engagement_receipts enable row level security;

-- Counts one click unless the same key was counted within the window; true when it counted.
create or replace function public.record_link_click(p_recap_date date, p_entry text, p_click_key text, p_at timestamptz, p_window_seconds integer)
returns boolean
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_new integer;
begin
  delete from public.link_click_window w where w.expires_at <= p_at;
  insert into public.link_click_window (click_key, expires_at)
  values (p_click_key, p_at + make_interval(secs => p_window_seconds))
  on conflict (click_key) do nothing;
  get diagnostics v_new = row_count;
  if v_new = 0 then
    return false;
  end if;
  insert into public.link_clicks as c (recap_date, entry, clicks) values (p_recap_date, p_entry, 1)
  on conflict (recap_date, entry) do update set clicks = c.clicks + 1;
  return true;
end
$$;

-- Counts one webhook delivery of an engagement event for a recap, once per svix-id; true when it counted.
create or replace function public.record_email_engagement(p_svix_id text, p_event_type text, p_recap_date date, p_received_at timestamptz)
returns boolean
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_new integer;
begin
  delete from public.email_engagement_receipts r where r.received_at < p_received_at - interval '7 days';
  insert into public.email_engagement_receipts (svix_id, received_at) values (p_svix_id, p_received_at)
  on conflict (svix_id) do nothing;
  get diagnostics v_new = row_count;
  if v_new = 0 then
    return false;
  end if;
  insert into public.email_engagement as e (recap_date, event_type, events) values (p_recap_date, p_event_type, 1)
  on conflict (recap_date, event_type) do update set events = e.events + 1;
  return true;
end
$$;

-- Every count, for the report: {clicks: [{recapDate, entry, clicks}], events: [{recapDate, type, events}]}.
create or replace function public.report_engagement()
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select jsonb_build_object(
    'clicks', (
      select coalesce(jsonb_agg(jsonb_build_object('recapDate', to_char(c.recap_date, 'YYYY-MM-DD'), 'entry', c.entry, 'clicks', c.clicks)
                                order by c.recap_date, c.entry), '[]'::jsonb)
      from public.link_clicks c
    ),
    'events', (
      select coalesce(jsonb_agg(jsonb_build_object('recapDate', to_char(e.recap_date, 'YYYY-MM-DD'), 'type', e.event_type, 'events', e.events)
                                order by e.recap_date, e.event_type), '[]'::jsonb)
      from public.email_engagement e
    )
  );
$$;

do $$
declare
  fn text;
  fns text[] := array[
    'public.record_link_click(date, text, text, timestamptz, integer)',
    'public.record_email_engagement(text, text, date, timestamptz)',
    'public.report_engagement()'];
  tbl text;
  tbls text[] := array['public.link_clicks', 'public.link_click_window', 'public.email_engagement', 'public.email_engagement_receipts'];
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
  foreach tbl in array tbls loop
    if exists (select 1 from pg_roles where rolname = 'anon') then
      execute format('revoke all on %s from anon', tbl);
    end if;
    if exists (select 1 from pg_roles where rolname = 'authenticated') then
      execute format('revoke all on %s from authenticated', tbl);
    end if;
    if exists (select 1 from pg_roles where rolname = 'service_role') then
      execute format('grant select, insert, update, delete on %s to service_role', tbl);
    end if;
  end loop;
end
$$;

notify pgrst, 'reload schema';
