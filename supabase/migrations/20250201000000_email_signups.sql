-- The signup table as the original site created it: id, email, created_at. On a project that
-- already has it (the old Lovable site's Supabase table) this changes nothing but makes sure the
-- e-mail column is unique, which signup relies on to detect duplicates (error 23505).
create table if not exists public.email_signups (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  created_at timestamptz not null default now()
);

do $$
begin
  if not exists (
    select 1
    from pg_index i
    join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
    where i.indrelid = 'public.email_signups'::regclass
      and i.indisunique and i.indnatts = 1 and a.attname = 'email'
  ) then
    create unique index email_signups_email_key on public.email_signups (email);
  end if;
end
$$;
