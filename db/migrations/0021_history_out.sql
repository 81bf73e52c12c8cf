-- The one-key completion that versions before 0016 called, kept for their instances during a rolling deploy: none
-- runs any more. A deployment still running such a version upgrades through the version before this one first.
drop function if exists complete_idempotency_key(bigint, uuid, smallint, jsonb, bytea);
