-- The books of money (docs/ledger.md): a double-entry ledger, append-only. Each movement of money is one ledger
-- transaction (the API's balance transaction, txn_...) with two or more entries, posted in the transaction of
-- the business write that moves the money, once per cause (`posting`, unique per account). Invariants, checked here:
-- a transaction's entries sum to zero in its currency; its `balance` entries sum to its net; net = amount - fee;
-- nothing posted is changed or deleted. A balance is the sum of its entries, never stored.

-- Each transaction balances, checked as it is inserted (a CHECK constraint calls it): it has two entries at least,
-- each of a known ledger account and not zero, summing to zero, its balance entries summing to its net. A refusal
-- (LG001) rolls back the business write with it: money that does not add up is never recorded.
create function ledger_balances(id text, posting text, net_cents bigint, accounts text[], cents bigint[])
returns boolean language plpgsql immutable as $$
declare
  total bigint := 0;
  to_balance bigint := 0;
begin
  if cardinality(accounts) < 2 or cardinality(accounts) <> cardinality(cents) then
    raise exception 'ledger transaction % (%) has % ledger accounts and % amounts: two entries at least, each both',
      id, posting, cardinality(accounts), cardinality(cents) using errcode = 'LG001';
  end if;
  for i in 1 .. cardinality(cents) loop
    if accounts[i] is null or accounts[i] not in ('balance', 'processor', 'processor_fees', 'payouts_in_transit', 'bank')
       or cents[i] is null or cents[i] = 0 then
      raise exception 'ledger transaction % (%): entry % (%, %) is not of a ledger account, or is nothing',
        id, posting, i, accounts[i], cents[i] using errcode = 'LG001';
    end if;
    total := total + cents[i];
    if accounts[i] = 'balance' then
      to_balance := to_balance + cents[i];
    end if;
  end loop;
  if total <> 0 or to_balance <> net_cents then
    raise exception 'ledger transaction % (%) does not balance: entries sum to %, its balance entries to % against a net of %',
      id, posting, total, to_balance, net_cents using errcode = 'LG001';
  end if;
  return true;
end $$;

create table ledger_transactions (
  account_id text not null references accounts (id),
  id text not null check (id ~ '^txn_[0-9a-f]{24}$'),
  -- Insertion order, for stable cursor pagination (ids are random).
  seq bigint generated always as identity,
  -- payout_arrival: a payout's share reaching the bank, which moves no balance (the API's list leaves it out).
  type text not null check (type in ('charge', 'refund', 'refund_failure', 'dispute', 'dispute_reversal', 'payout',
    'payout_failure', 'payout_arrival')),
  -- What moved the money: a charge (ch_), a refund (re_), a dispute (the processor's id), a payout (po_).
  source text not null check (char_length(source) between 1 and 255),
  -- The cause, once (`charge:<id>`, `refund:<id>`, `dispute:<ref>` ...): a cause told twice posts once.
  posting text not null check (char_length(posting) between 1 and 300),
  amount_cents bigint not null,
  fee_cents bigint not null check (fee_cents >= 0),
  -- Each part of the fee: [{type, amount_cents, description}], as Stripe's fee_details.
  fee_details jsonb not null default '[]' check (jsonb_typeof(fee_details) = 'array'),
  net_cents bigint not null,
  currency text not null check (currency ~ '^[a-z]{3}$'),
  -- When the net becomes available to pay out: pending until then.
  available_on timestamptz not null,
  -- The payout that carried it to the bank (po_), once one has.
  payout text check (char_length(payout) <= 255),
  created_at timestamptz not null default now(),
  -- Its entries, in its row: entry i moves entry_cents[i] into the ledger account entry_accounts[i] (`balance`: what
  -- the processor owes the account, pending until available_on, then available; `processor`: the other side of what
  -- customers paid or were given back; `processor_fees`: what the processor kept; `payouts_in_transit`: paid out, on
  -- its way to the bank; `bank`: arrived). In the row, they are written with their transaction or not at all, and
  -- nothing can be added to a transaction later. The view ledger_entries below lists them one per row.
  entry_accounts text[] not null,
  entry_cents bigint[] not null,
  primary key (account_id, id),
  unique (account_id, posting),
  check (net_cents = amount_cents - fee_cents),
  constraint ledger_transaction_balances check (ledger_balances(id, posting, net_cents, entry_accounts, entry_cents))
);
create index ledger_transactions_account_seq on ledger_transactions (account_id, seq desc);
-- Source first: an index led by account_id alone would tempt the planner, while the table is young and its
-- statistics empty, to look a transaction up by (account_id, id) by scanning the account's rows (a plan each
-- connection keeps until the table is next analyzed). Measured: 10,000 postings of one account took 16 to 57 s per
-- batch with (account_id, source), 3 s with (source, account_id).
create index ledger_transactions_source on ledger_transactions (source, account_id);

-- The entries one per row, for reading (SQL by hand, tests, the fault run's checker). The balance itself never
-- reads them: a transaction's balance entries sum to its net, so an account's balance is the sum of its nets.
-- (Entries in a table of their own, checked by a trigger at commit, were measured first: docs/measure.md.)
create view ledger_entries as
  select t.account_id, t.id as transaction_id, (e.n - 1)::smallint as entry, e.ledger_account, e.amount_cents
  from ledger_transactions t,
       unnest(t.entry_accounts, t.entry_cents) with ordinality as e (ledger_account, amount_cents, n);

-- Append-only: what is posted stays. A mistake is corrected by another posting, never by an edit; the only change
-- a ledger transaction takes is the payout that carried it, once.
create function ledger_append_only() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' and old.payout is null and (to_jsonb(new) - 'payout') = (to_jsonb(old) - 'payout') then
    return new;
  end if;
  raise exception '% of % refused: the ledger is append-only', tg_op, tg_table_name using errcode = 'LG002';
end $$;
create trigger ledger_transactions_append_only before update or delete on ledger_transactions
  for each row execute function ledger_append_only();
