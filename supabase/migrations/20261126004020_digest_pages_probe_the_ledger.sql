-- The digest's two checks against the ledger ("not sent this recap yet"), in digest_undelivered
-- (a page of 500 candidates) and digest_write_batch (a batch of 100 before it is written), are one
-- probe of the ledger's primary key per subscriber, whatever the table statistics say.
--
-- Written as plain NOT EXISTS, each became an anti join that the planner chose afresh on every
-- call from the statistics, and a ledger that has just been truncated or filled (the first send
-- to an imported list; a new recap's rows before autovacuum's next analyze) looks nearly empty to
-- it: it then read every ledger row of the recap for each page and each batch (a merge, hash or
-- nested-loop anti join over all of them), and a send to N subscribers cost O(N²) in the database.
-- auto_explain during `npm run bench -- digest` at 100,000, three runs, statements over 8 ms: 245
-- pages with a merge anti join (median 50 ms, up to 164 ms) and 552 pages and batches with a hash
-- anti join (median 14 ms, up to 182 ms); with those two join methods switched off, 412 batches
-- with a nested loop over the materialised ledger (median 105 ms). The database's CPU per
-- recipient ranged from 97 to 584 µs between runs of the same send.
--
-- `offset 0` in the subquery is PostgreSQL's long-standing planner fence: an EXISTS with an OFFSET is not
-- turned into a join, so it runs per row with both columns of the primary key bound, which is a
-- unique index lookup under any statistics. Otherwise as in 20261123000300_digest_batches.sql and
-- 20261125001010_digest_undelivered_seeks.sql; CREATE OR REPLACE keeps their grants.

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
    where a.id > coalesce(p_after, '')
      -- One probe of the ledger's primary key per candidate: `offset 0` keeps this a subquery run per row.
      and not exists (select 1 from public.digest_deliveries d where d.recap_date = p_recap_date and d.subscriber_id = a.id offset 0)
      and not exists (
        select 1 from public.digest_batches b
        where b.recap_date = p_recap_date and b.state in ('pending', 'unknown') and a.id = any (b.subscriber_ids))
    order by a.id
    limit p_limit
  ) page;
$$;

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
    -- One probe of the ledger's primary key per id: `offset 0` keeps this a subquery run per row.
    where not exists (select 1 from public.digest_deliveries d where d.recap_date = p_recap_date and d.subscriber_id = wanted.id offset 0)
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
