-- The Monday job's memory. One row per recap per subscriber, written only after the mail provider
-- accepted the message: the unique key is what makes "sent exactly once" hold across crashes,
-- restarts and replicas.
create table if not exists public.digest_deliveries (
  recap_date date not null,
  subscriber_id text not null,
  provider_message_id text,
  sent_at timestamptz not null default now(),
  primary key (recap_date, subscriber_id)
);

-- One row per recap while a job sends it: the lease keeps two processes (or two replicas) from
-- sending the same week at once, and expires on its own if the holder dies.
create table if not exists public.digest_locks (
  recap_date date primary key,
  holder text not null,
  locked_until timestamptz not null
);
