-- The keys of the requests that complete in one shared transaction (src/idempotency/completions.ts) are completed
-- by one statement, each fenced by its own claim's token, in the order given, rather than a statement per request
-- (side by side, docs/measure.md: 1.026x the throughput of new charges). Any key taken over raises IK409 and the
-- transaction rolls back (the batch is then run one request at a time, and only the one taken over fails). A loop
-- of updates by id, not a join with the arrays: each keeps the plan of an update by primary key, whatever the
-- planner would guess of unnest's rows.
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

-- The one-key form the version before calls, kept so that its instances still complete keys during a rolling
-- deploy: the same statement, through the function above.
create or replace function complete_idempotency_key(p_id bigint, p_token uuid, p_status smallint, p_headers jsonb, p_body bytea)
returns void language plpgsql as $$
begin
  perform complete_idempotency_keys(array[p_id], array[p_token], array[p_status], array[p_headers], array[p_body]);
end $$;
