-- An unsettled key never expires (its operation may be downstream; src/idempotency/store.ts), so an outcome can
-- be settled after the key's TTL, by a retry or the recovery worker. Its response is then kept a full TTL from
-- the settlement, not dropped at once: otherwise the client's next retry would find the key expired and start a
-- new operation for a request whose first one it never heard of. Keys settled in time keep their expiry.
create or replace function complete_idempotency_key(p_id bigint, p_token uuid, p_status smallint, p_headers jsonb, p_body bytea)
returns void language plpgsql as $$
begin
  update idempotency_keys set
    claim_token = null, locked_until = null, completed_at = now(), request = null,
    response_status = p_status, response_headers = p_headers, response_body = p_body,
    expires_at = greatest(expires_at, now() + (expires_at - created_at))
  where id = p_id and claim_token = p_token;
  if not found then
    raise exception 'idempotency key % was taken over by another request', p_id using errcode = 'IK409';
  end if;
end $$;
