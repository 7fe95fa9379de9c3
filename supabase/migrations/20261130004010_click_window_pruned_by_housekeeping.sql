-- A /go/ click no longer deletes the window's expired rows: that made every request a delete as
-- well as an insert, and rows stayed as long as nobody clicked. An expired row of the same key is
-- taken over instead, and housekeeping removes the rest (prune_link_click_window). The per-network
-- cap in front of this function (server/site/routes/go.ts) keeps a client past its cap from
-- reaching it at all.

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
  insert into public.link_click_window as w (click_key, expires_at)
  values (p_click_key, p_at + make_interval(secs => p_window_seconds))
  on conflict (click_key) do update set expires_at = excluded.expires_at where w.expires_at <= p_at;
  get diagnostics v_new = row_count;
  if v_new = 0 then
    return false;
  end if;
  insert into public.link_clicks as c (recap_date, entry, clicks) values (p_recap_date, p_entry, 1)
  on conflict (recap_date, entry) do update set clicks = c.clicks + 1;
  return true;
end
$$;

-- Removes the click window's rows that expired at or before p_at; how many went.
create or replace function public.prune_link_click_window(p_at timestamptz)
returns integer
language plpgsql
volatile
security invoker
set search_path = ''
as $$
declare
  v_gone integer;
begin
  delete from public.link_click_window w where w.expires_at <= p_at;
  get diagnostics v_gone = row_count;
  return v_gone;
end
$$;

do $$
begin
  revoke all on function public.prune_link_click_window(timestamptz) from public;
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function public.prune_link_click_window(timestamptz) from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on function public.prune_link_click_window(timestamptz) from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant execute on function public.prune_link_click_window(timestamptz) to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
