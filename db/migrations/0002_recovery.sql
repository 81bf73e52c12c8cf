-- What an unknown outcome needs to be settled without its client: the request a claim was made for, refunds
-- that exist before the processor answers, and (for the simulated processor) a ledger of its own.

-- The validated request (path parameters and body) of claims on endpoints that can be recovered, and how often
-- the recovery worker has failed to settle the claim (each failure doubles its wait before the next attempt).
alter table idempotency_keys add column request jsonb;
alter table idempotency_keys add column recovery_attempts integer not null default 0;
-- The recovery worker looks for claims that are neither completed nor held.
create index idempotency_keys_abandoned on idempotency_keys (locked_until) where completed_at is null;

-- A refund is written, pending, before the processor is asked, so concurrent refunds can never promise more
-- than the charge holds while no lock is kept during the call; it becomes succeeded once the processor answers.
alter table refunds drop constraint refunds_status_check;
alter table refunds add constraint refunds_status_check check (status in ('pending', 'succeeded'));
-- The operation id forwarded to the processor: a retry or the recovery worker finds the same pending refund.
alter table refunds add column operation_id uuid unique;
alter table charges add column amount_refund_pending_cents integer not null default 0
  check (amount_refund_pending_cents >= 0);
alter table charges add constraint charges_refunds_within_amount
  check (amount_refunded_cents + amount_refund_pending_cents <= amount_cents);

-- The simulated processor's memory, as a real processor keeps it: every operation it performed, under the
-- idempotency key it was sent with, in a schema of its own so that it survives the service's restarts.
create schema simulated_processor;
create table simulated_processor.operations (
  idempotency_key text primary key check (char_length(idempotency_key) <= 255),
  kind text not null check (kind in ('charge', 'refund')),
  -- What was asked (amount, currency, source; or the charge reference): a reused key must ask the same.
  parameters jsonb not null,
  -- What it did: succeeded with a reference, or failed with a decline code.
  outcome jsonb not null,
  created_at timestamptz not null default now()
);
-- Refunds are checked against what their charge took, as a real processor refuses to refund more.
create index simulated_processor_refunds on simulated_processor.operations ((parameters->>'charge_reference')) where kind = 'refund';
