-- A claim names the Recovery that settles it (request->>'recovery', src/idempotency/recovery.ts) instead of being
-- matched to one by its endpoint's path. The claims still open when this runs are given the name of the Recovery
-- their endpoint had, so that the recovery worker of the new version settles them.
update idempotency_keys set request = request || jsonb_build_object('recovery', case endpoint
    when 'POST /v1/charges' then 'charge'
    when 'POST /v1/charges/:id/capture' then 'capture'
    when 'POST /v1/charges/:id/void' then 'void'
    when 'POST /v1/charges/:id/refunds' then 'refund'
  end)
where completed_at is null and request is not null and endpoint in ('POST /v1/charges',
  'POST /v1/charges/:id/capture', 'POST /v1/charges/:id/void', 'POST /v1/charges/:id/refunds');
