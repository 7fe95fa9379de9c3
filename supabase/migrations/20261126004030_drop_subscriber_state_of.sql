-- subscriber_state_of(jsonb) read a subscriber's state from a whole row turned into jsonb, so that
-- one function fitted the table before and after it had a status column. Every function that used
-- it now reads the status column (the report since 20261126003010, the state-history trigger since
-- 20261126004010), and no function body names it any more: dropped, so a subscriber's state is
-- read one way, from status.
drop function if exists public.subscriber_state_of(jsonb);
