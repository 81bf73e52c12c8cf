-- The simulated processor's ledger no longer checks the kinds of operation it holds: its own code is its one
-- writer, and the kinds are declared once, at the processor boundary (OperationKind, src/processor/processor.ts),
-- so that a new operation of a fork (a payout) needs no migration here.
alter table simulated_processor.operations drop constraint operations_kind_check;
