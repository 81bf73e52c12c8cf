-- Payouts in the ledger (docs/ledger.md, "Payouts"): the processor pays its balance out to the bank, and each
-- account's share of a payout moves from its balance to money in transit (a `payout`), then to the bank when the
-- payout arrives (a `payout_arrival`), or back to the balance if it fails (a `payout_failure`): postings of 0014.

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
