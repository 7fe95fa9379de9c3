-- `npm run subscribers -- import`: each row of the file reaches its final state in one statement,
-- and a chunk of rows in one call (one transaction), so an import interrupted anywhere leaves
-- every address either as it was or as the file says, never in between (the old import signed
-- everyone up as active first and marked who had left afterwards). Rerunning the file finishes.
--
-- p_rows: [{"email": ..., "state": active|pending|unsubscribed|bounced|complained, "hashes": [...]}],
-- the hashes the address's keyed hashes for the suppression list. Rules:
--   - a new address gets the file's state, or the suppression list's when that is stricter;
--   - an address on the list keeps its state, unless the file says it left in a stricter way
--     (complained > bounced > unsubscribed > active/pending): an import never brings anyone back.
-- Returns how many rows had each outcome: added (active or pending), recorded_left (added or
-- changed to a state that receives nothing), present (active or pending already), left_alone
-- (unsubscribed, bounced or complained already, or suppressed).
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
      on conflict (email) do update
        set unsubscribed_at = coalesce(e.unsubscribed_at, now()), unsubscribe_reason = excluded.unsubscribe_reason,
            pending_since = null, status_changed_at = now()
        where excluded.unsubscribe_reason is not null
          and coalesce(array_position(v_rank, e.status), 0) < array_position(v_rank, excluded.unsubscribe_reason)
      returning e.status, (e.xmax::text = '0') into v_status, v_inserted;
    if v_status is null then
      select e.status into v_status from public.email_signups e where e.email = lower(btrim(v_email));
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

revoke all on function public.import_subscribers(jsonb) from public;

do $$
begin
  if exists (select 1 from pg_roles where rolname = 'anon') then
    revoke all on function public.import_subscribers(jsonb) from anon;
  end if;
  if exists (select 1 from pg_roles where rolname = 'authenticated') then
    revoke all on function public.import_subscribers(jsonb) from authenticated;
  end if;
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant execute on function public.import_subscribers(jsonb) to service_role;
  end if;
end
$$;

notify pgrst, 'reload schema';
