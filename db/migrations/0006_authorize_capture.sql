-- Authorize now, capture later. A charge may be only authorized (requires_capture) until it is captured (in full
-- or in part: succeeded), voided, or expires. Capture, void and expiry of one charge are decided one at a time:
-- each first writes itself as the charge's pending operation (under the row lock, in a short transaction),
-- calls the processor with no lock held, then records the result.

alter table charges drop constraint charges_status_check;
alter table charges add constraint charges_status_check check (status in ('succeeded', 'failed', 'requires_capture', 'voided', 'expired'));
alter table charges add column captured boolean not null default true;
alter table charges add column amount_captured_cents integer not null default 0 check (amount_captured_cents >= 0);
update charges set amount_captured_cents = amount_cents where status = 'succeeded';
update charges set captured = false where status <> 'succeeded';
alter table charges add column authorization_expires_at timestamptz;
-- The capture or void under way: what it is, the operation id the processor was given, the amount, and (for the
-- expiry worker, which has no idempotency key to hold) until when its claim holds.
alter table charges add column pending_operation text check (pending_operation in ('capture', 'void'));
alter table charges add column pending_operation_id text check (char_length(pending_operation_id) <= 100);
alter table charges add column pending_amount_cents integer check (pending_amount_cents > 0);
alter table charges add column pending_until timestamptz;
alter table charges add constraint charges_pending_complete check ((pending_operation is null) = (pending_operation_id is null));
alter table charges add constraint charges_captured_within_amount check (amount_captured_cents <= amount_cents);
-- Refunds apply to captured money only.
alter table charges drop constraint charges_refunds_within_amount;
alter table charges add constraint charges_refunds_within_captured check (amount_refunded_cents + amount_refund_pending_cents <= amount_captured_cents);
alter table charges drop constraint charges_check;
alter table charges add constraint charges_failure_code check ((status = 'failed') = (failure_code is not null));
create index charges_authorizations_expiring on charges (authorization_expires_at) where status = 'requires_capture';

-- Listing refunds per account and per charge, newest first, and lists filtered by creation time.
create index refunds_account_id_seq on refunds (account_id, seq desc);
create index refunds_charge_id_seq on refunds (charge_id, seq desc);

-- The simulated processor's ledger also knows authorizations, captures and voids.
alter table simulated_processor.operations drop constraint operations_kind_check;
alter table simulated_processor.operations add constraint operations_kind_check check (kind in ('charge', 'authorization', 'capture', 'void', 'refund'));

-- A refund carries its currency (its charge's), so that refunds list without a join.
alter table refunds add column currency text;
update refunds r set currency = c.currency from charges c where c.id = r.charge_id;
alter table refunds alter column currency set not null;
alter table refunds add constraint refunds_currency_check check (currency ~ '^[a-z]{3}$');
-- As at a real processor, an authorization is captured or voided once, whatever the idempotency key.
create unique index operations_one_settlement on simulated_processor.operations ((parameters->>'charge_reference'))
  where kind in ('capture', 'void');
