-- Looking a subscriber up by id as text (an unsubscribe link, the digest's re-check) must not scan
-- the table. The existing expression index covers only active subscribers; this one covers all.
-- Text, not the column's own type, so the same statement fits uuid and integer ids alike.
create index if not exists email_signups_id_text_idx on public.email_signups ((id::text));
