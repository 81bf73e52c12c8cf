-- Payouts, against each account's balance in each currency. The balance can never go below zero (the check), and a
-- payout's amount leaves it in the same transaction that writes the payout pending: two payouts at once cannot
-- both spend the same money.
create table payout_balances (
  account_id text not null references accounts (id),
  currency text not null check (currency ~ '^[a-z]{3}$'),
  available_cents bigint not null check (available_cents >= 0),
  primary key (account_id, currency)
);

create table payouts (
  seq bigint generated always as identity,
  id text primary key check (char_length(id) <= 40),
  account_id text not null references accounts (id),
  amount_cents integer not null check (amount_cents > 0),
  currency text not null check (currency ~ '^[a-z]{3}$'),
  description text check (char_length(description) <= 1000),
  status text not null check (status in ('pending', 'paid', 'failed')),
  failure_code text check (char_length(failure_code) <= 255),
  operation_id text unique check (char_length(operation_id) <= 255),
  processor_reference text check (char_length(processor_reference) <= 255),
  created_at timestamptz not null default now()
);
create index payouts_account_seq on payouts (account_id, seq);
