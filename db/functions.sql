-- The current text of every SQL function and trigger of the service, as the migrations leave them. Migrations stay
-- append-only, so a function redefined later lives in several of them; read it here. A migration that changes one
-- changes this file in the same commit: test/db/functions.test.ts holds the two equal, and names what differs.

-- Completes idempotency keys with their responses, each fenced by its claim's token, in the order given: the
-- statement that completes the keys of the requests sharing one transaction (src/idempotency/completions.ts), and
-- the recovery worker's for one (src/idempotency/store.ts, completeKeys). A claim taken over meanwhile (its lease ran
-- out) raises IK409, which rolls back the work recorded with it. An unsettled key never expires (its operation may be
-- downstream), so one settled after its TTL keeps its response a full TTL from now. A loop of updates by id, each
-- with the plan of an update by primary key. Last defined by 0016.
create or replace function complete_idempotency_keys(p_ids bigint[], p_tokens uuid[], p_statuses smallint[], p_headers jsonb[], p_bodies bytea[])
returns void language plpgsql as $$
begin
  for i in 1 .. coalesce(cardinality(p_ids), 0) loop
    update idempotency_keys set
      claim_token = null, locked_until = null, completed_at = now(), request = null,
      response_status = p_statuses[i], response_headers = p_headers[i], response_body = p_bodies[i],
      expires_at = greatest(expires_at, now() + (expires_at - created_at))
    where id = p_ids[i] and claim_token = p_tokens[i];
    if not found then
      raise exception 'idempotency key % was taken over by another request', p_ids[i] using errcode = 'IK409';
    end if;
  end loop;
end $$;

-- The webhook fan-out, in the transaction that writes an event: one delivery per enabled endpoint of the account
-- that takes the event's type, and a graphile-worker job to send each (the transactional outbox; the sender is
-- src/webhooks/deliver.ts). Most accounts have no endpoint: a plain look first. Last defined by 0007.
create or replace function fan_out_event() returns trigger language plpgsql as $$
declare
  woken bigint;
begin
  if not exists (select from webhook_endpoints e where e.account_id = new.account_id and e.status = 'enabled') then
    return null;
  end if;
  with deliveries as (
    insert into webhook_deliveries (id, event_id, endpoint_id, account_id)
    select 'wd_' || substr(md5(gen_random_uuid()::text), 1, 24), new.id, e.id, e.account_id
    from webhook_endpoints e
    where e.account_id = new.account_id and e.status = 'enabled'
      and (new.type = any (e.enabled_events) or '*' = any (e.enabled_events))
    returning id
  )
  select count(graphile_worker.add_job('deliver_webhook', json_build_object('delivery_id', d.id))) into woken
  from deliveries d;
  return null;
end $$;

drop trigger if exists events_fan_out on events;
create trigger events_fan_out after insert on events for each row execute function fan_out_event();

-- Each ledger transaction balances, checked as it is inserted (a CHECK constraint calls it): it has two entries at
-- least, each of a known ledger account and not zero, summing to zero, its balance entries summing to its net. A
-- refusal (LG001) rolls back the business write with it. Last defined by 0025.
create or replace function ledger_balances(id text, posting text, net_cents bigint, accounts text[], cents bigint[])
returns boolean language plpgsql immutable as $$
declare
  total bigint := 0;
  to_balance bigint := 0;
begin
  if cardinality(accounts) < 2 or cardinality(accounts) <> cardinality(cents) then
    raise exception 'ledger transaction % (%) has % ledger accounts and % amounts: two entries at least, each both',
      id, posting, cardinality(accounts), cardinality(cents) using errcode = 'LG001';
  end if;
  for i in 1 .. cardinality(cents) loop
    if accounts[i] is null or accounts[i] not in ('balance', 'processor', 'processor_fees', 'platform_fees', 'payouts_in_transit', 'bank')
       or cents[i] is null or cents[i] = 0 then
      raise exception 'ledger transaction % (%): entry % (%, %) is not of a ledger account, or is nothing',
        id, posting, i, accounts[i], cents[i] using errcode = 'LG001';
    end if;
    total := total + cents[i];
    if accounts[i] = 'balance' then
      to_balance := to_balance + cents[i];
    end if;
  end loop;
  if total <> 0 or to_balance <> net_cents then
    raise exception 'ledger transaction % (%) does not balance: entries sum to %, its balance entries to % against a net of %',
      id, posting, total, to_balance, net_cents using errcode = 'LG001';
  end if;
  return true;
end $$;

-- Append-only: what is posted stays. A mistake is corrected by another posting, never by an edit; the only change
-- a ledger transaction takes is the payout that carried it, once. Last defined by 0014.
create or replace function ledger_append_only() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' and old.payout is null and (to_jsonb(new) - 'payout') = (to_jsonb(old) - 'payout') then
    return new;
  end if;
  raise exception '% of % refused: the ledger is append-only', tg_op, tg_table_name using errcode = 'LG002';
end $$;
drop trigger if exists ledger_transactions_append_only on ledger_transactions;
create trigger ledger_transactions_append_only before update or delete on ledger_transactions
  for each row execute function ledger_append_only();

-- When a ledger transaction is settled (its effect on the balance no longer changes with time): money in when it is
-- available (and not before it was posted), anything else when it was posted. Indexed per account: the balances
-- kept (src/ledger/settled-balances.ts) are rolled and read by ranges of it. Last defined by 0017.
create or replace function ledger_settles_at(net_cents bigint, created_at timestamptz, available_on timestamptz)
returns timestamptz language sql immutable parallel safe as $$
  select case when net_cents > 0 then greatest(created_at, available_on) else created_at end
$$;

-- A posting whose cause is posted already, with another amount: a contradiction, refused with both amounts. The
-- posting's insert calls it from its ON CONFLICT clause (src/ledger/repository.ts). Last defined by 0018.
create or replace function ledger_posted_otherwise(p_posting text, p_posted bigint, p_told bigint) returns text
language plpgsql as $$
begin
  raise exception '% was posted as %, and is now told as %', p_posting, p_posted, p_told using errcode = 'LG003';
end $$;
