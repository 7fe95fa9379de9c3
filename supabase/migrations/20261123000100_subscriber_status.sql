-- The subscriber's state as one column the digest, the report and the pages read:
--   pending (double opt-in, awaiting confirmation) · active · unsubscribed (by the reader)
--   · bounced · complained (by the provider's webhook).
-- It is derived, never written: from unsubscribed_at + unsubscribe_reason (why and when the address
-- left, as before) and pending_since (when it started waiting for its confirmation). Older code,
-- scripts and the old site's rows that only know those columns therefore cannot disagree with it.
alter table public.email_signups add column if not exists pending_since timestamptz;
alter table public.email_signups add column if not exists status_changed_at timestamptz;
-- Consent record: when the address was confirmed, and keyed hashes (HMAC; never the raw value)
-- of the network address at signup and at confirmation.
alter table public.email_signups add column if not exists confirmed_at timestamptz;
alter table public.email_signups add column if not exists signup_ip_hash text;
alter table public.email_signups add column if not exists confirm_ip_hash text;
-- When the last confirmation e-mail was sent: the throttle (one per 24 h, 30 days when suppressed).
alter table public.email_signups add column if not exists confirmation_sent_at timestamptz;
-- The welcome e-mail goes once per address ever.
alter table public.email_signups add column if not exists welcomed_at timestamptz;

alter table public.email_signups add column if not exists status text generated always as (
  case
    when unsubscribed_at is not null then coalesce(unsubscribe_reason, 'unsubscribed')
    when pending_since is not null then 'pending'
    else 'active'
  end
) stored;

update public.email_signups
  set status_changed_at = coalesce(unsubscribed_at, resubscribed_at, created_at, now())
  where status_changed_at is null;
alter table public.email_signups alter column status_changed_at set default now();
alter table public.email_signups alter column status_changed_at set not null;

-- Old rows that differ only in case or surrounding spaces are one address: merged into the row
-- with the most recent intent, which keeps the earliest signup time and every ledger row of the
-- others. A complaint or a hard bounce is the provider's word, not an intent, and wins whenever
-- it came (complained > bounced); otherwise the row whose state changed last wins, so an old
-- unsubscribed `Foo@x.com` yields to a later active `foo@x.com` and a later unsubscribe to an
-- older signup (it used to keep unsubscribed over active regardless of time).
drop table if exists pg_temp.signup_merge;
-- A temporary table (dropped below), not ON COMMIT DROP: a tool that runs the file outside a
-- transaction would lose it after the first statement.
create temporary table signup_merge as
  select id, keeper, rank
  from (
    select id::text as id,
      row_number() over w as rank,
      first_value(id::text) over w as keeper,
      count(*) over (partition by lower(btrim(email))) as copies
    from public.email_signups
    where email is not null
    window w as (
      partition by lower(btrim(email))
      order by case status when 'complained' then 0 when 'bounced' then 1 else 2 end,
               status_changed_at desc, created_at, id::text
    )
  ) ranked
  where copies > 1;

insert into public.digest_deliveries (recap_date, subscriber_id, provider_message_id, sent_at)
  select d.recap_date, m.keeper, d.provider_message_id, d.sent_at
  from public.digest_deliveries d join signup_merge m on m.id = d.subscriber_id and m.rank > 1
  on conflict (recap_date, subscriber_id) do nothing;
delete from public.digest_deliveries d using signup_merge m where m.id = d.subscriber_id and m.rank > 1;
update public.email_signups e
  set created_at = earliest.created_at
  from (
    select m.keeper, min(s.created_at) as created_at
    from signup_merge m join public.email_signups s on s.id::text = m.id
    group by m.keeper
  ) earliest
  where e.id::text = earliest.keeper and earliest.created_at < e.created_at;
delete from public.email_signups e using signup_merge m where e.id::text = m.id and m.rank > 1;
drop table pg_temp.signup_merge;

-- Every address is stored trimmed and lower-cased, whoever writes it (the server, an import, a
-- direct REST insert), so an exact comparison is the normalised one everywhere.
update public.email_signups set email = lower(btrim(email)) where email <> lower(btrim(email));

create or replace function public.email_signups_normalise_email()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.email := lower(btrim(new.email));
  return new;
end
$$;

drop trigger if exists email_signups_normalise_email on public.email_signups;
create trigger email_signups_normalise_email
  before insert or update of email on public.email_signups
  for each row execute function public.email_signups_normalise_email();

-- The one predicate for "gets the digest" is status = 'active'; the digest pages through it by id.
drop index if exists public.email_signups_active_id_idx;
create index if not exists email_signups_status_active_id_idx on public.email_signups ((id::text)) where status = 'active';
-- Monday's clean-up of pending signups older than 30 days.
create index if not exists email_signups_pending_since_idx on public.email_signups (pending_since) where pending_since is not null;

-- Addresses whose data was deleted at their request but which had complained or bounced: only a
-- keyed hash (HMAC of the normalised address) stays, so a bot cannot quietly sign them up again.
create table if not exists public.subscriber_suppressions (
  address_hash text primary key,
  reason text not null check (reason in ('bounced', 'complained')),
  suppressed_at timestamptz not null default now()
);
alter table public.subscriber_suppressions enable row level security;
