-- Payouts in the ledger (docs/ledger.md, "Payouts"): the processor pays its balance out to the bank, and each
-- account's share of a payout moves from its balance to money in transit (a `payout`), then to the bank when the
-- payout arrives (a `payout_arrival`: the balance does not move, so the API's balance transactions leave it out),
-- or back to the balance if it fails (a `payout_failure`). Postings of the ledger of 0014; two names added.
alter table ledger_transactions drop constraint ledger_transactions_type_check,
  add constraint ledger_transactions_type_check check (type in ('charge', 'refund', 'refund_failure', 'dispute',
    'dispute_reversal', 'payout', 'payout_failure', 'payout_arrival'));
alter table ledger_entries drop constraint ledger_entries_ledger_account_check,
  add constraint ledger_entries_ledger_account_check check (ledger_account in ('balance', 'processor',
    'processor_fees', 'payouts_in_transit', 'bank'));
-- What a payout carried, for the payout report (npm run reconcile:report -- --payouts). Led by the payout, not by
-- account_id alone (see 0014 on the planner's trap with a young table).
create index ledger_transactions_payout on ledger_transactions (payout, account_id) where payout is not null;

-- The simulated processor's payouts (src/processor/simulated-payouts.ts): each with what it carried, so that a
-- balance transaction is paid out once.
create table simulated_processor.payouts (
  reference text primary key,
  state jsonb not null,
  created_at timestamptz not null default now()
);

-- The payout report and the scheduled comparison read the payouts the processor told of lately, from its events.
create index processor_events_payouts on processor_events (received_at) where type like 'payout.%';
