-- The mailbox is the subscriber. Every spelling of one mailbox
-- (server/mailbox-key.ts: lower case, +tag dropped, Gmail dots dropped, googlemail.com read as
-- gmail.com) is one row, so a bounce, a complaint, an unsubscribe or a deletion holds for all of
-- them, and the digest and every other e-mail go once per mailbox. Existing rows of one mailbox
-- are merged (below), then a unique index keeps it so.

-- The mailbox of a stored (canonical) address, as server/mailbox-key.ts's mailboxKey makes it
-- (tests/mailbox-key-sql.test.ts keeps the two equal).
create or replace function public.mailbox_key(p_email text)
returns text
language sql
immutable
parallel safe
set search_path = ''
as $$
  select case
    when strpos(a.address, '@') = 0 then a.address
    when p.domain in ('gmail.com', 'googlemail.com') then replace(p.local, '.', '') || '@gmail.com'
    else p.local || '@' || p.domain
  end
  from (select lower(btrim(p_email)) as address) a
  cross join lateral (select regexp_replace(a.address, '@[^@]*$', '') as whole, substring(a.address from '@([^@]*)$') as domain) s
  cross join lateral (select case when strpos(s.whole, '+') > 1 then split_part(s.whole, '+', 1) else s.whole end as local, s.domain) p;
$$;

alter table public.email_signups add column if not exists mailbox text generated always as (public.mailbox_key(email)) stored;

-- The rows merged into another of the same mailbox, each as it was (its spelling, dates, keyed
-- network hashes, and the deliveries the kept row could not take over), so no history is lost.
-- They go with the row they were merged into when that row is deleted.
create table if not exists public.email_signups_merged (
  id text primary key,
  merged_into text not null,
  merged_at timestamptz not null default now(),
  original jsonb not null
);
create index if not exists email_signups_merged_into_idx on public.email_signups_merged (merged_into);
alter table public.email_signups_merged enable row level security;

create or replace function public.forget_merged_signups()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  delete from public.email_signups_merged m where m.merged_into in (select o.id::text from old_rows o);
  return null;
end
$$;
drop trigger if exists email_signups_forget_merged on public.email_signups;
create trigger email_signups_forget_merged after delete on public.email_signups
  referencing old table as old_rows for each statement execute function public.forget_merged_signups();

-- The merge. For each mailbox with several rows, the row kept is the one first confirmed (else the
-- one first subscribed). Its state: a complaint on any row, else a bounce on any row; otherwise
-- the most recent intent of any row (its unsubscribe, or its latest signup, confirmation or
-- re-subscription), so a merged complainer is never active. A pending row that never confirmed
-- is nobody's proven intent (anyone can sign up any spelling), so it counts only when no other
-- row of the mailbox says anything: a bot's later signup of another spelling cannot demote a
-- confirmed reader to pending. The other rows' ledger rows, events,
-- mail, state history and batch places move to the kept row; what cannot move (a second delivery
-- of the same recap) stays in their archived copy. Triggers that would mail (a welcome or a
-- confirmation claimed by the copy of a date) or forget history (the deletion's) are off meanwhile.
alter table public.email_signups disable trigger email_signups_outbox_update;
alter table public.email_signups disable trigger email_signups_forget_deleted;
do $$
declare
  v_mailbox text;
  v_keep uuid;
  v_merged uuid[];
  v_strict record;
  v_latest record;
  v_id uuid;
begin
  for v_mailbox in select e.mailbox from public.email_signups e group by e.mailbox having count(*) > 1 loop
    select e.id into v_keep from public.email_signups e where e.mailbox = v_mailbox
      order by e.confirmed_at asc nulls last, e.created_at asc, e.id limit 1;
    select array_agg(e.id) into v_merged from public.email_signups e where e.mailbox = v_mailbox and e.id <> v_keep;

    select e.unsubscribed_at, e.unsubscribe_reason into v_strict from public.email_signups e
      where e.mailbox = v_mailbox and e.unsubscribe_reason in ('complained', 'bounced')
      order by e.unsubscribe_reason = 'complained' desc, e.unsubscribed_at asc limit 1;
    select e.unsubscribed_at, e.unsubscribe_reason, e.pending_since into v_latest from public.email_signups e
      where e.mailbox = v_mailbox
      order by (e.pending_since is not null and e.unsubscribed_at is null and e.confirmed_at is null) asc,
               case when e.unsubscribed_at is not null then e.unsubscribed_at
                    else greatest(coalesce(e.resubscribed_at, e.created_at), e.confirmed_at, e.pending_since) end desc
      limit 1;

    update public.email_signups k
      set unsubscribed_at = case when v_strict.unsubscribe_reason is null then v_latest.unsubscribed_at else v_strict.unsubscribed_at end,
          unsubscribe_reason = coalesce(v_strict.unsubscribe_reason, v_latest.unsubscribe_reason),
          pending_since = case when v_strict.unsubscribe_reason is null then v_latest.pending_since end,
          confirmed_at = (select min(e.confirmed_at) from public.email_signups e where e.mailbox = v_mailbox),
          welcomed_at = (select min(e.welcomed_at) from public.email_signups e where e.mailbox = v_mailbox),
          confirmation_sent_at = (select max(e.confirmation_sent_at) from public.email_signups e where e.mailbox = v_mailbox),
          status_changed_at = now()
      where k.id = v_keep;

    foreach v_id in array v_merged loop
      update public.digest_deliveries d set subscriber_id = v_keep::text
        where d.subscriber_id = v_id::text
          and not exists (select 1 from public.digest_deliveries k where k.recap_date = d.recap_date and k.subscriber_id = v_keep::text);
    end loop;
    insert into public.email_signups_merged (id, merged_into, original)
      select e.id::text, v_keep::text, to_jsonb(e) || jsonb_build_object('deliveries', coalesce((
        select jsonb_agg(to_jsonb(d)) from public.digest_deliveries d where d.subscriber_id = e.id::text), '[]'::jsonb))
      from public.email_signups e where e.id = any(v_merged);
    delete from public.digest_deliveries d where d.subscriber_id in (select unnest(v_merged)::text);
    update public.email_events ev set subscriber_id = v_keep::text where ev.subscriber_id in (select unnest(v_merged)::text);
    update public.subscriber_state_history h set subscriber_id = v_keep::text where h.subscriber_id in (select unnest(v_merged)::text);
    update public.mail_outbox m
      set subscriber_id = v_keep::text,
          state = case when m.state in ('queued', 'retrying') then 'cancelled' else m.state end,
          last_error = case when m.state in ('queued', 'retrying') then 'merged into another spelling of the same mailbox' else m.last_error end,
          lease_until = null
      where m.subscriber_id in (select unnest(v_merged)::text);
    update public.digest_batches b
      set subscriber_ids = array(
        select case when m.id in (select unnest(v_merged)::text) then v_keep::text else m.id end
        from unnest(b.subscriber_ids) with ordinality as m(id, n) order by m.n)
      where b.subscriber_ids && (select array_agg(x::text) from unnest(v_merged) x);
    delete from public.email_signups e where e.id = any(v_merged);
  end loop;
end
$$;
alter table public.email_signups enable trigger email_signups_outbox_update;
alter table public.email_signups enable trigger email_signups_forget_deleted;

create unique index if not exists email_signups_mailbox_key on public.email_signups (mailbox);

-- A subscriber looked up by any spelling of its mailbox (the provider's webhooks, the CLI).
create or replace function public.subscriber_by_email(p_email text)
returns jsonb
language sql
stable
security invoker
set search_path = ''
as $$
  select public.subscriber_json(e) from public.email_signups e where e.mailbox = public.mailbox_key(p_email);
$$;

-- The signup (20261128001010), now one row per mailbox: another spelling of a mailbox on the list
-- finds that row, answers as its state says, and changes nothing about its address (the one first
-- subscribed). A complained mailbox is never sent a confirmation by a signup from the site: only
-- the owner's own "Subscribe again" (p_owner, from a page reached by a link mailed to them) may
-- ask for one, as before.
drop function if exists public.signup_decide(text, text, text, text, text[], boolean);
create or replace function public.signup_decide(
  p_email text, p_source text, p_mode text, p_network_hash text, p_address_hashes text[], p_welcome boolean, p_owner boolean default false
)
returns json
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_mailbox text := p_address_hashes[1];
  v_id text;
  v_status text;
  v_suppressed text;
  v_throttle interval;
  v_due boolean;
  v_inserted boolean;
begin
  if p_mode not in ('single', 'double') then
    raise exception 'signup mode must be single or double, not %', p_mode using errcode = '22023';
  end if;
  select s.reason into v_suppressed
    from public.subscriber_suppressions s
    where s.address_hash = any(coalesce(p_address_hashes, '{}'))
    order by s.reason = 'complained' desc
    limit 1;
  if v_suppressed is not null and v_mailbox is not null then
    insert into public.subscriber_suppressions as s (address_hash, reason) values (v_mailbox, v_suppressed)
      on conflict (address_hash) do update set reason = excluded.reason where s.reason <> 'complained';
    delete from public.subscriber_suppressions s where s.address_hash = any(p_address_hashes[2:]) and s.address_hash <> v_mailbox;
  end if;
  loop
    insert into public.email_signups as e (email, source, signup_ip_hash, pending_since, unsubscribed_at, unsubscribe_reason)
    values (
      p_email, p_source, p_network_hash,
      case when p_mode = 'double' and v_suppressed is null then now() end,
      case when v_suppressed is not null then now() end,
      v_suppressed
    )
    on conflict (mailbox) do nothing
    returning e.id::text, e.status into v_id, v_status;
    v_inserted := v_id is not null;
    if not v_inserted then
      select e.id::text, e.status into v_id, v_status
        from public.email_signups e where e.mailbox = public.mailbox_key(p_email) for update;
    end if;
    -- Deleted between the insert and the lock (the owner's "delete my data"): try again.
    exit when v_id is not null;
  end loop;

  if v_status = 'active' and v_inserted then
    if p_welcome then
      update public.email_signups e set welcomed_at = now() where e.id::text = v_id and e.welcomed_at is null;
    end if;
    return json_build_object('id', v_id, 'outcome', 'subscribed');
  end if;
  if v_status = 'active' then
    return json_build_object('id', v_id, 'outcome', case when p_mode = 'single' then 'already_subscribed' else 'nothing_to_send' end);
  end if;

  if v_status in ('unsubscribed', 'pending') and p_mode = 'single' then
    update public.email_signups e
      set unsubscribed_at = null, unsubscribe_reason = null, pending_since = null,
          resubscribed_at = case when e.status = 'unsubscribed' then now() else e.resubscribed_at end,
          status_changed_at = now(), source = p_source, signup_ip_hash = p_network_hash,
          welcomed_at = case when p_welcome and e.welcomed_at is null then now() else e.welcomed_at end
      where e.id::text = v_id;
    return json_build_object('id', v_id, 'outcome', 'subscribed');
  end if;

  if v_status = 'unsubscribed' then
    -- Double mode: back to waiting for the owner's confirmation.
    update public.email_signups e
      set unsubscribed_at = null, unsubscribe_reason = null, pending_since = now(),
          status_changed_at = now(), source = p_source, signup_ip_hash = p_network_hash
      where e.id::text = v_id;
    v_status := 'pending';
  end if;

  -- A complaint is the one signal a sender must never ignore: nothing goes to that inbox unless
  -- its owner asks from their own page.
  if v_status = 'complained' and not p_owner then
    return json_build_object('id', v_id, 'outcome', 'nothing_to_send');
  end if;

  -- The row is locked (inserted or selected for update above), so reading its throttle and then
  -- claiming it cannot race; the mailbox's claim is one atomic upsert, so two spellings posted at
  -- once cannot both win it.
  v_throttle := case when v_status = 'pending' then interval '24 hours' else interval '30 days' end;
  select e.confirmation_sent_at is null or e.confirmation_sent_at <= now() - v_throttle into v_due
    from public.email_signups e where e.id::text = v_id;
  if v_due and v_mailbox is not null then
    insert into public.mailbox_confirmations as m (mailbox_hash, sent_at) values (v_mailbox, now())
      on conflict (mailbox_hash) do update set sent_at = excluded.sent_at where m.sent_at <= now() - v_throttle
      returning true into v_due;
    v_due := coalesce(v_due, false);
  end if;
  if v_due then
    update public.email_signups e set confirmation_sent_at = now() where e.id::text = v_id;
  end if;
  return json_build_object('id', v_id, 'outcome', case when v_due then 'send_confirmation' else 'nothing_to_send' end);
end
$$;

-- The import (20261124003020), one row per mailbox: a spelling of a mailbox already on the list
-- is that row, and follows the same rules as the same spelling would.
create or replace function public.import_subscribers(p_rows jsonb)
returns jsonb
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_row jsonb;
  v_email text;
  v_state text;
  v_suppressed text;
  v_target text;
  v_status text;
  v_inserted boolean;
  v_outcome text;
  v_rank constant text[] := array['unsubscribed', 'bounced', 'complained'];
  v_counts jsonb := '{"added": 0, "recorded_left": 0, "present": 0, "left_alone": 0}';
begin
  for v_row in select r from jsonb_array_elements(coalesce(p_rows, '[]'::jsonb)) as x(r) loop
    v_email := v_row ->> 'email';
    v_state := v_row ->> 'state';
    if v_email is null or v_state is null or v_state not in ('active', 'pending', 'unsubscribed', 'bounced', 'complained') then
      raise exception 'import row needs an email and a state (active, pending, unsubscribed, bounced or complained): %', v_row using errcode = '22023';
    end if;
    select s.reason into v_suppressed
      from public.subscriber_suppressions s
      where s.address_hash in (select jsonb_array_elements_text(coalesce(v_row -> 'hashes', '[]'::jsonb)))
      order by s.reason = 'complained' desc
      limit 1;
    v_target := case
      when v_suppressed is not null and coalesce(array_position(v_rank, v_state), 0) < array_position(v_rank, v_suppressed) then v_suppressed
      else v_state end;
    v_status := null;
    insert into public.email_signups as e (email, source, pending_since, unsubscribed_at, unsubscribe_reason)
      values (v_email, 'import',
              case when v_target = 'pending' then now() end,
              case when v_target = any(v_rank) then now() end,
              case when v_target = any(v_rank) then v_target end)
      on conflict (mailbox) do update
        set unsubscribed_at = coalesce(e.unsubscribed_at, now()), unsubscribe_reason = excluded.unsubscribe_reason,
            pending_since = null, status_changed_at = now()
        where excluded.unsubscribe_reason is not null
          and coalesce(array_position(v_rank, e.status), 0) < array_position(v_rank, excluded.unsubscribe_reason)
      returning e.status, (e.xmax::text = '0') into v_status, v_inserted;
    if v_status is null then
      select e.status into v_status from public.email_signups e where e.mailbox = public.mailbox_key(v_email);
      v_outcome := case when v_status in ('active', 'pending') then 'present' else 'left_alone' end;
    elsif not v_inserted then
      v_outcome := 'recorded_left';
    elsif v_target is distinct from v_state then
      v_outcome := 'left_alone';
    else
      v_outcome := case when v_target in ('active', 'pending') then 'added' else 'recorded_left' end;
    end if;
    v_counts := jsonb_set(v_counts, array[v_outcome], to_jsonb((v_counts ->> v_outcome)::int + 1));
  end loop;
  return v_counts;
end
$$;

do $$
declare
  fn text;
  fns text[] := array[
    'public.mailbox_key(text)',
    'public.subscriber_by_email(text)',
    'public.signup_decide(text, text, text, text, text[], boolean, boolean)',
    'public.import_subscribers(jsonb)'
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
  revoke all on function public.forget_merged_signups() from public;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on public.email_signups_merged from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on public.email_signups_merged from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant select, delete on public.email_signups_merged to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
