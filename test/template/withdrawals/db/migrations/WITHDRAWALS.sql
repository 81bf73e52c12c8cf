-- Withdrawals: money an account sends out of its balance to its bank (Stripe: a manual payout). The balance is the
-- ledger's (docs/ledger.md): a withdrawal's amount leaves it as a `payout` posting in the same transaction that
-- writes the withdrawal pending, under the balance's lock, and only if what is available holds it (reserveFromBalance
-- in src/ledger/postings.ts): two withdrawals at once cannot both spend the same money. No constraint holds the
-- balance at zero or above: the processor may take it below on its own (a dispute lost after the money left), and
-- that must post, never fail.
create table withdrawals (
  seq bigint generated always as identity,
  id text not null check (char_length(id) <= 40),
  account_id text not null references accounts (id),
  amount_cents integer not null check (amount_cents > 0),
  currency text not null check (currency ~ '^[a-z]{3}$'),
  description text check (char_length(description) <= 1000),
  status text not null check (status in ('pending', 'paid', 'failed', 'canceled')),
  failure_code text check (char_length(failure_code) <= 255),
  operation_id text not null check (char_length(operation_id) <= 255),
  processor_reference text check (char_length(processor_reference) <= 255),
  created_at timestamptz not null default now(),
  primary key (account_id, id),
  unique (account_id, operation_id)
);
create index withdrawals_account_seq on withdrawals (account_id, seq);
