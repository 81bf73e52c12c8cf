-- Balances kept, not summed from the first posting at each read (docs/ledger.md, "Balances kept"). A ledger
-- transaction is settled from the moment its effect on the balance can no longer change with time: money in once it
-- is available, anything else once posted. What is settled before an account's `through` is kept as one sum per
-- currency; a read adds the rest (what settles at `through` or later: the recent and the pending). The ledger stays
-- append-only and a settled transaction never changes, so the sum kept is right for good once rolled.

-- When a ledger transaction is settled: money in when it is available (and not before it was posted), anything else
-- when it was posted. Money out counts against the balance at once whatever its available_on (repository.ts,
-- AVAILABLE), and a payout's arrival moves nothing.
create function ledger_settles_at(net_cents bigint, created_at timestamptz, available_on timestamptz)
returns timestamptz language sql immutable parallel safe as $$
  select case when net_cents > 0 then greatest(created_at, available_on) else created_at end
$$;

-- Each account's ledger in time when it settles: what a roll adds (from the old `through` to the new) and what a
-- read adds to the sum kept (from `through` on) are each one range of it.
create index ledger_transactions_settles_at on ledger_transactions
  (account_id, ledger_settles_at(net_cents, created_at, available_on));

-- One row per account and currency, written only by src/ledger/kept-balances.ts. Every row of an account has the
-- same `through` (they are rolled together); a currency with no row yet is summed in full.
create table ledger_settled_balances (
  account_id text not null references accounts (id),
  currency text not null check (currency ~ '^[a-z]{3}$'),
  -- Every ledger transaction of the account in this currency settled before this moment is in net_cents, and none
  -- settled at it or later.
  through timestamptz not null,
  net_cents bigint not null,
  primary key (account_id, currency)
);
