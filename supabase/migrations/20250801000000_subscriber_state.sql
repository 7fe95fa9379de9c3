-- What the newsletter needs to know about a subscriber beyond the address. Additive only: rows
-- that existed before (the old site's) become active subscribers with an unknown source.
alter table public.email_signups add column if not exists source text;
alter table public.email_signups add column if not exists unsubscribed_at timestamptz;
alter table public.email_signups add column if not exists unsubscribe_reason text;
alter table public.email_signups add column if not exists resubscribed_at timestamptz;

do $$
begin
  if not exists (select 1 from pg_constraint where conname = 'email_signups_unsubscribe_reason_check') then
    alter table public.email_signups
      add constraint email_signups_unsubscribe_reason_check
      check (unsubscribe_reason is null or unsubscribe_reason in ('unsubscribed', 'bounced', 'complained'));
  end if;
end
$$;

-- The digest walks active subscribers in id order (as text, which also fits integer ids of an
-- older table), a page at a time.
create index if not exists email_signups_active_id_idx on public.email_signups ((id::text)) where unsubscribed_at is null;
