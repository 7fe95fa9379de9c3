-- Where each signup came from and readers who bring readers.
--
-- A row keeps the landing visit's origin as the site carried it to the form (the page the visit
-- landed on, its `ref` and `utm_*` values), written once, by the signup that creates the row: a
-- later signup of the same mailbox is not a new reader and changes none of it. The values reach
-- this table normalised by the server (short lower-case tokens, a known page's path); the checks
-- below refuse anything else, so nothing free-form can reach the report.
--
-- Every row has a share code: random, not derived from the address, replaceable by its owner. A
-- signup through it records the code's owner in `referred_by`, but only on a row that signup
-- creates, so neither the owner's own mailbox nor a mailbox already on the list is ever credited,
-- and one mailbox is credited at most once. The credit counts from the moment the new row first
-- becomes active (`first_active_at`: at once in single mode, at confirmation in double mode); a
-- deleted row takes its credit with it.
alter table public.email_signups
  add column if not exists origin_page text,
  add column if not exists origin_ref text,
  add column if not exists origin_utm_source text,
  add column if not exists origin_utm_medium text,
  add column if not exists origin_utm_campaign text,
  add column if not exists share_code text,
  add column if not exists referred_by uuid references public.email_signups (id) on delete set null,
  add column if not exists via_share boolean not null default false,
  add column if not exists first_active_at timestamptz,
  add column if not exists referral_thanked integer not null default 0,
  drop constraint if exists email_signups_origin_page_check,
  drop constraint if exists email_signups_origin_tokens_check,
  drop constraint if exists email_signups_share_code_check,
  add constraint email_signups_origin_page_check check (origin_page ~ '^/[a-z0-9._-]{0,120}$'),
  add constraint email_signups_origin_tokens_check check (
    (origin_ref is null or origin_ref ~ '^[a-z0-9._-]{1,40}$')
    and (origin_utm_source is null or origin_utm_source ~ '^[a-z0-9._-]{1,40}$')
    and (origin_utm_medium is null or origin_utm_medium ~ '^[a-z0-9._-]{1,40}$')
    and (origin_utm_campaign is null or origin_utm_campaign ~ '^[a-z0-9._-]{1,40}$')
  ),
  add constraint email_signups_share_code_check check (share_code ~ '^[a-z0-9]{16}$');

-- 64 random bits as 16 hex digits: a random UUID's bits through SHA-256, so no part of the code
-- is the UUID's fixed version digits and nothing of it comes from the address.
create or replace function public.new_share_code()
returns text
language sql
volatile
set search_path = ''
as $$
  select left(encode(sha256(convert_to(gen_random_uuid()::text, 'UTF8')), 'hex'), 16);
$$;

update public.email_signups set share_code = public.new_share_code() where share_code is null;
alter table public.email_signups alter column share_code set default public.new_share_code();
alter table public.email_signups alter column share_code set not null;
create unique index if not exists email_signups_share_code_idx on public.email_signups (share_code);
create index if not exists email_signups_referred_by_idx on public.email_signups (referred_by) where referred_by is not null;
create index if not exists email_signups_first_active_at_idx on public.email_signups (first_active_at) where first_active_at is not null;

-- Rows already on the list: active since their confirmation, or since they joined.
update public.email_signups
  set first_active_at = coalesce(confirmed_at, resubscribed_at, created_at)
  where first_active_at is null and (confirmed_at is not null or (pending_since is null and unsubscribed_at is null));

-- The first moment a row is active, kept for good: a later unsubscribe does not take back a
-- reader's arrival (nor a referrer's credit for it).
create or replace function public.email_signups_first_active()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if new.first_active_at is null and new.unsubscribed_at is null and new.pending_since is null then
    new.first_active_at := now();
  end if;
  return new;
end
$$;

drop trigger if exists email_signups_first_active on public.email_signups;
create trigger email_signups_first_active
  before insert or update of unsubscribed_at, pending_since on public.email_signups
  for each row execute function public.email_signups_first_active();

-- The operator's REFERRAL_MILESTONES, written by the server at start-up (empty: no thanks).
create table if not exists public.referral_settings (
  singleton boolean primary key default true check (singleton),
  milestones integer[] not null default '{}'
);
alter table public.referral_settings enable row level security;
insert into public.referral_settings (singleton, milestones) values (true, '{}') on conflict (singleton) do nothing;

create or replace function public.referral_set_milestones(p_milestones integer[])
returns void
language sql
set search_path = ''
as $$
  update public.referral_settings set milestones = coalesce(p_milestones, '{}') where singleton;
$$;

-- A referred row became active: the referrer's count grew by one. The referrer's row is locked
-- first, so two readers activating at once count one after the other and neither milestone is
-- skipped; each milestone is thanked at most once (referral_thanked only rises), and only a
-- referrer still on the list gets the e-mail.
create or replace function public.referral_credit()
returns trigger
language plpgsql
set search_path = ''
as $$
declare
  v_thanked integer;
  v_status text;
  v_count integer;
  v_milestone integer;
begin
  select e.referral_thanked, e.status into v_thanked, v_status
    from public.email_signups e where e.id = new.referred_by for update;
  if not found then
    return null;
  end if;
  select count(*) into v_count
    from public.email_signups r where r.referred_by = new.referred_by and r.first_active_at is not null;
  select max(m) into v_milestone
    from public.referral_settings s, unnest(s.milestones) m
    where m <= v_count and m > v_thanked;
  if v_milestone is null then
    return null;
  end if;
  update public.email_signups e set referral_thanked = v_milestone where e.id = new.referred_by;
  if v_status = 'active' then
    perform public.outbox_enqueue('referral_thanks', new.referred_by::text, jsonb_build_object('milestone', v_milestone, 'count', v_count));
  end if;
  return null;
end
$$;

drop trigger if exists email_signups_referral_credit_insert on public.email_signups;
create trigger email_signups_referral_credit_insert
  after insert on public.email_signups
  for each row when (new.referred_by is not null and new.first_active_at is not null)
  execute function public.referral_credit();

drop trigger if exists email_signups_referral_credit_update on public.email_signups;
create trigger email_signups_referral_credit_update
  after update on public.email_signups
  for each row when (new.referred_by is not null and old.first_active_at is null and new.first_active_at is not null)
  execute function public.referral_credit();

alter table public.mail_outbox drop constraint if exists mail_outbox_kind_check;
alter table public.mail_outbox add constraint mail_outbox_kind_check
  check (kind in ('confirm', 'welcome', 'operator', 'link', 'referral_thanks'));

-- The signup functions take the origin (and the share code) as one more argument.
drop function if exists public.signup_counted(text, integer, integer, text, integer, integer, text, text, text, text, text[], boolean);
drop function if exists public.signup_decide(text, text, text, text, text[], boolean, boolean);

create or replace function public.signup_decide(p_email text, p_source text, p_mode text, p_network_hash text, p_address_hashes text[], p_welcome boolean, p_owner boolean default false, p_origin jsonb default null)
returns json
language plpgsql
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
  v_stranger_bounce boolean;
  v_referrer uuid;
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
  -- A reader's share link: it credits its owner only through a row it creates (below), so never
  -- the owner's own mailbox and never a mailbox already on the list.
  if p_origin ->> 'share' is not null then
    select r.id into v_referrer from public.email_signups r where r.share_code = p_origin ->> 'share';
  end if;
  loop
    insert into public.email_signups as e (
      email, source, signup_ip_hash, pending_since, unsubscribed_at, unsubscribe_reason,
      origin_page, origin_ref, origin_utm_source, origin_utm_medium, origin_utm_campaign, referred_by, via_share
    )
    values (
      p_email, p_source, p_network_hash,
      case when p_mode = 'double' and v_suppressed is null then now() end,
      case when v_suppressed is not null then now() end,
      v_suppressed,
      p_origin ->> 'page', p_origin ->> 'ref', p_origin ->> 'utm_source', p_origin ->> 'utm_medium', p_origin ->> 'utm_campaign',
      v_referrer, v_referrer is not null
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

  -- A bounce of a spelling nobody ever confirmed says nothing about the owner's own spelling
  -- (`victim+x@` may be another mailbox where `+` is no sub-address). The owner signing up their
  -- own spelling makes it the delivery address and gets a confirmation there at once: the
  -- bounced confirmation reached no inbox, so no inbox's throttle is spent. The row stays bounced
  -- (no digest, never pruned) until the owner follows that confirmation.
  if v_status = 'bounced' and not v_inserted then
    select e.confirmed_at is null and e.email <> lower(btrim(p_email)) into v_stranger_bounce
      from public.email_signups e where e.id::text = v_id;
    if v_stranger_bounce then
      update public.email_signups e
        set email = p_email, status_changed_at = now(), source = p_source, signup_ip_hash = p_network_hash
        where e.id::text = v_id;
      -- A statement of its own, so the confirmation's outbox row carries the new link version.
      update public.email_signups e set confirmation_sent_at = now() where e.id::text = v_id;
      if v_mailbox is not null then
        insert into public.mailbox_confirmations as m (mailbox_hash, sent_at) values (v_mailbox, now())
          on conflict (mailbox_hash) do update set sent_at = excluded.sent_at;
      end if;
      return json_build_object('id', v_id, 'outcome', 'send_confirmation');
    end if;
  end if;

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

create or replace function public.signup_counted(p_network_key text, p_network_limit integer, p_network_window_ms integer, p_mailbox_key text, p_mailbox_limit integer, p_mailbox_window_ms integer, p_email text, p_source text, p_mode text, p_network_hash text, p_address_hashes text[], p_welcome boolean, p_origin jsonb default null)
returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  v_network jsonb;
  v_mailbox jsonb;
begin
  v_network := public.signup_rate_limit_hit(p_network_key, 1, p_network_window_ms, false);
  if (v_network->>'points')::integer > p_network_limit then
    return jsonb_build_object('network', v_network);
  end if;
  v_mailbox := public.signup_rate_limit_hit(p_mailbox_key, 1, p_mailbox_window_ms, false);
  if (v_mailbox->>'points')::integer > p_mailbox_limit then
    return jsonb_build_object('network', v_network, 'mailbox', v_mailbox);
  end if;
  return jsonb_build_object(
    'network', v_network,
    'mailbox', v_mailbox,
    'decision', public.signup_decide(p_email, p_source, p_mode, p_network_hash, p_address_hashes, p_welcome, false, p_origin)::jsonb
  );
end
$$;

-- The owner of a share code, for the share link's address: whether it is still in use.
create or replace function public.share_code_known(p_code text)
returns boolean
language sql
stable
set search_path = ''
as $$
  select exists (select 1 from public.email_signups e where e.share_code = p_code);
$$;

-- A new share code for the subscriber: the old link stops crediting anyone (it still leads to the
-- site). Null when the subscriber is gone.
create or replace function public.replace_share_code(p_id text)
returns text
language sql
volatile
set search_path = ''
as $$
  update public.email_signups e set share_code = public.new_share_code()
    where e.id::text = public.subscriber_current_id(p_id)
    returning e.share_code;
$$;

create or replace function public.subscriber_details(p_id text)
returns jsonb
language sql
stable
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
    'origin', jsonb_strip_nulls(jsonb_build_object(
      'page', e.origin_page, 'ref', e.origin_ref,
      'utm_source', e.origin_utm_source, 'utm_medium', e.origin_utm_medium, 'utm_campaign', e.origin_utm_campaign)),
    'via_share', e.via_share,
    'share_code', e.share_code,
    'referrals', (select count(*) from public.email_signups r where r.referred_by = e.id and r.first_active_at is not null),
    'first_active_at', e.first_active_at,
    'deliveries', (
      select coalesce(jsonb_agg(jsonb_build_object('recap_date', to_char(d.recap_date, 'YYYY-MM-DD'), 'sent_at', d.sent_at) order by d.recap_date), '[]'::jsonb)
      from public.digest_deliveries d where d.subscriber_id = e.id::text),
    'merged_spellings', (
      select coalesce(jsonb_agg(jsonb_build_object(
          'email', m.original ->> 'email',
          'created_at', m.original -> 'created_at',
          'confirmed_at', m.original -> 'confirmed_at',
          'unsubscribed_at', m.original -> 'unsubscribed_at',
          'unsubscribe_reason', m.original -> 'unsubscribe_reason',
          'signup_ip_hash', m.original -> 'signup_ip_hash',
          'confirm_ip_hash', m.original -> 'confirm_ip_hash',
          'merged_at', m.merged_at,
          'deliveries', (
            select coalesce(jsonb_agg(jsonb_build_object('recap_date', left(d ->> 'recap_date', 10), 'sent_at', d -> 'sent_at') order by d ->> 'recap_date'), '[]'::jsonb)
            from jsonb_array_elements(coalesce(m.original -> 'deliveries', '[]'::jsonb)) d)
        ) order by m.original ->> 'created_at', m.id), '[]'::jsonb)
      from public.email_signups_merged m where m.merged_into = e.id::text))
  from public.email_signups e where e.id::text = public.subscriber_current_id(p_id);
$$;

-- The digest's recipients carry their share code: the footer offers each reader their own link.
create or replace function public.digest_recipients(p_subscriber_ids jsonb)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select coalesce(jsonb_agg(jsonb_build_object(
           'id', s.id::text, 'email', s.email, 'share_code', s.share_code,
           'active', exists (select 1 from public.digest_active_subscribers a where a.id = s.id::text))), '[]'::jsonb)
  from public.email_signups s
  where s.id::text in (select jsonb_array_elements_text(p_subscriber_ids));
$$;

-- The report's growth: readers who became active in the last `p_weeks` weeks, by week, by where
-- they came from and by the page their visit landed on; the recap pages that brought the most;
-- the share links' part; the referrers with the most credits (their addresses, which the report
-- masks). Read through email_signups_first_active_at_idx, so a long list costs only its new rows.
create or replace function public.report_growth(p_weeks integer)
returns jsonb
language sql
stable
set search_path = ''
as $$
  with bounds as (
    select date_trunc('week', now()) - (greatest(p_weeks, 1) - 1) * interval '1 week' as first_week
  ),
  grown as materialized (
    select to_char(date_trunc('week', e.first_active_at), 'YYYY-MM-DD') as week,
           case
             when e.via_share then 'share link'
             else coalesce(e.origin_utm_source, e.origin_ref, case when e.source = 'import' then 'import' end, 'direct')
           end as source,
           coalesce(e.origin_page, case when e.source like '/%' then e.source end) as page
    from public.email_signups e, bounds b
    where e.first_active_at >= b.first_week
  ),
  -- At most ten rows a week, the rest summed as "(other)": every active reader can bring a value of
  -- their own, and a table a bot could lengthen at will is no report.
  ranked as (
    select week, source, page, count(*)::int as n,
           row_number() over (partition by week order by count(*) desc, source, page) as place
    from grown group by 1, 2, 3
  ),
  by_week as (
    select week,
           case when place <= 10 then source else '(other)' end as source,
           case when place <= 10 then page end as page,
           sum(n)::int as n
    from ranked group by 1, 2, 3
  ),
  pages as (
    select page, count(*)::int as n from grown where page like '/weekly-recap-%' group by 1 order by 2 desc, 1 limit 10
  ),
  referrers as (
    select r.referred_by, count(*)::int as n
    from public.email_signups r
    where r.referred_by is not null and r.first_active_at is not null
    group by 1 order by 2 desc, 1 limit 10
  )
  select jsonb_build_object(
    'weeks', (select coalesce(jsonb_agg(jsonb_build_object('week', week, 'source', source, 'page', page, 'readers', n) order by week, n desc, source, page), '[]'::jsonb) from by_week),
    'pages', (select coalesce(jsonb_agg(jsonb_build_object('page', page, 'readers', n) order by n desc, page), '[]'::jsonb) from pages),
    'readers', (select count(*)::int from grown),
    'referred', (select count(*)::int from grown where source = 'share link'),
    'topReferrers', (
      select coalesce(jsonb_agg(jsonb_build_object('email', e.email, 'referrals', r.n) order by r.n desc, e.email), '[]'::jsonb)
      from referrers r join public.email_signups e on e.id = r.referred_by)
  );
$$;

do $$
declare
  v_function text;
begin
  foreach v_function in array array[
    'public.new_share_code()',
    'public.email_signups_first_active()',
    'public.referral_set_milestones(integer[])',
    'public.referral_credit()',
    'public.signup_decide(text, text, text, text, text[], boolean, boolean, jsonb)',
    'public.signup_counted(text, integer, integer, text, integer, integer, text, text, text, text, text[], boolean, jsonb)',
    'public.share_code_known(text)',
    'public.replace_share_code(text)',
    'public.subscriber_details(text)',
    'public.digest_recipients(jsonb)',
    'public.report_growth(integer)'
  ] loop
    execute format('revoke all on function %s from public', v_function);
    if exists (select 1 from pg_roles where rolname = 'anon') then
      execute format('revoke all on function %s from anon', v_function);
    end if;
    if exists (select 1 from pg_roles where rolname = 'authenticated') then
      execute format('revoke all on function %s from authenticated', v_function);
    end if;
    if exists (select 1 from pg_roles where rolname = 'service_role') then
      execute format('grant execute on function %s to service_role', v_function);
    end if;
  end loop;
  revoke all on table public.referral_settings from public;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on table public.referral_settings from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on table public.referral_settings from authenticated;
  end if;
end
$$;
