-- What a new charge costs PostgreSQL, made smaller without giving up a guarantee (issue 7; measured with
-- npm run bench -- --statements, which prints each statement's time and WAL).

-- Idempotency keys and events are written on every request of an account. A foreign key to accounts makes each of
-- those inserts lock the account's row (FOR KEY SHARE); the many concurrent requests of one account then share
-- that lock through a MultiXact, which measured 0.06 ms of the claim and 0.1 ms of a charge's commit. Both rows
-- are only ever written for an account that the request authenticated, and accounts are never deleted, so the
-- reference adds nothing there. Charges and refunds keep theirs: they are the money.
alter table idempotency_keys drop constraint idempotency_keys_account_id_fkey;
alter table events drop constraint events_account_id_fkey;

-- The fan-out in one statement instead of two (the second looked up the deliveries the first had just written),
-- after a plain look for an enabled endpoint: most accounts have none, and an INSERT ... SELECT that inserts
-- nothing still sets up its insert (0.049 -> 0.027 ms per event, measured with track_functions).
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

-- A completed key no longer needs the request it kept for the recovery worker: dropping it makes the row
-- the completion writes smaller.
create or replace function complete_idempotency_key(p_id bigint, p_token uuid, p_status smallint, p_headers jsonb, p_body bytea)
returns void language plpgsql as $$
begin
  update idempotency_keys set
    claim_token = null, locked_until = null, completed_at = now(), request = null,
    response_status = p_status, response_headers = p_headers, response_body = p_body
  where id = p_id and claim_token = p_token;
  if not found then
    raise exception 'idempotency key % was taken over by another request', p_id using errcode = 'IK409';
  end if;
end $$;
