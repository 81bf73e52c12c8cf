-- A posting whose cause is posted already, with another amount: a contradiction, refused with both amounts. The
-- posting's insert calls it from its ON CONFLICT clause (src/ledger/repository.ts), so that one statement posts, skips
-- a cause posted already, and refuses a contradiction, with nothing to read back: the postings of many requests then go
-- out in the batch that completes them (docs/idempotency.md, "Many requests, one statement").
create or replace function ledger_posted_otherwise(p_posting text, p_posted bigint, p_told bigint) returns text
language plpgsql as $$
begin
  raise exception '% was posted as %, and is now told as %', p_posting, p_posted, p_told using errcode = 'LG003';
end $$;
