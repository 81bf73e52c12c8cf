-- Captures and voids that the processor answers "received" and decides later (Adyen's modifications: issue 53;
-- docs/later-outcomes.md, "Decided later"). The charge waits in capture_pending or void_pending, its operation still
-- pending on it (so that no other capture or void starts), until the processor's news decides it: captured
-- (succeeded) or voided, or refused, which gives the authorization back (requires_capture). The comparison looks at
-- such charges whatever their age, as at the undecided ones.
alter table charges drop constraint charges_status_check;
alter table charges add constraint charges_status_check
  check (status in ('requires_action', 'processing', 'succeeded', 'failed', 'requires_capture', 'capture_pending',
    'void_pending', 'voided', 'expired'));
alter table charges add constraint charges_decided_later_pending
  check (status not in ('capture_pending', 'void_pending') or pending_operation = left(status, -8));
drop index charges_undecided;
create index charges_undecided on charges (seq)
  where status in ('requires_action', 'processing', 'capture_pending', 'void_pending');

-- The simulated processor settles a payment once, as Stripe does; a capture or void it refused (pm_card_decidedLater,
-- decided by its control) leaves the payment to settle again.
drop index simulated_processor.operations_one_settlement;
create unique index operations_one_settlement on simulated_processor.operations ((parameters->>'charge_reference'))
  where kind in ('capture', 'void') and coalesce(state->>'performed', 'true') <> 'false';
