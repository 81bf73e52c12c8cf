-- 0006 meant to replace 0001's unnamed check on failure_code by a named one, and dropped `charges_check`; but that
-- name was 0001's `amount_refunded_cents between 0 and amount_cents` (PostgreSQL names a check over two columns after
-- the table alone), so the failure-code check stayed twice (charges_check1 beside charges_failure_code) and a refunded
-- amount lost its floor (its ceiling is charges_refunds_within_captured). Found by reading db/schema.sql.
alter table charges drop constraint if exists charges_check1;
-- Adding it reads every charge once, under the migration's lock: on a large table, migrate at a quiet moment
-- (npm run migrate, docs/operations.md).
alter table charges add constraint charges_amount_refunded_cents_check check (amount_refunded_cents >= 0);
