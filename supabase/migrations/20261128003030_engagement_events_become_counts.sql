-- The events email.delivered, email.opened and email.clicked are counted per recap
-- (20261128003010_clicks_and_engagement.sql) and no longer stored one row per message with the
-- subscriber's id. The rows the webhook stored before are turned into the same counts, attributed
-- to their recap through the ledger as the report attributes bounces, and then deleted. An event
-- whose message is not in the ledger (a confirmation, a welcome, a test copy, a deleted reader's
-- message) counts nowhere, as it would now. Run again, it finds no such rows and changes nothing.
insert into public.email_engagement as c (recap_date, event_type, events)
select d.recap_date, e.event_type, count(*)
from public.email_events e
cross join lateral (
  select l.recap_date from public.digest_deliveries l where l.provider_message_id = e.provider_message_id limit 1
) d
where e.event_type in ('email.delivered', 'email.opened', 'email.clicked') and e.provider_message_id is not null
group by d.recap_date, e.event_type
on conflict (recap_date, event_type) do update set events = c.events + excluded.events;

delete from public.email_events e where e.event_type in ('email.delivered', 'email.opened', 'email.clicked');
