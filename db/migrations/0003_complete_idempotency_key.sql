-- Completing a key as one statement that fails when the claim was taken over, rather than one that updates no
-- row: the transaction that made the handler's writes can then be sent to PostgreSQL in one pipeline, and a
-- fenced-off completion aborts it before its COMMIT (which then rolls back).
create function complete_idempotency_key(p_id bigint, p_token uuid, p_status smallint, p_headers jsonb, p_body bytea)
returns void language plpgsql as $$
begin
  update idempotency_keys set
    claim_token = null, locked_until = null, completed_at = now(),
    response_status = p_status, response_headers = p_headers, response_body = p_body
  where id = p_id and claim_token = p_token;
  if not found then
    raise exception 'idempotency key % was taken over by another request', p_id using errcode = 'IK409';
  end if;
end $$;
