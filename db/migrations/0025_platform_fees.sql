-- Stripe Connect's application fees (docs/processors.md, "What is booked where"). The platform prices each linked
-- account's payments per currency (npm run account:platform-fee): its new charges made on its connected account carry
-- the fee, which Stripe takes from the connected account's payment for the platform. The merchant's books post it as
-- a fee part of the charge (ledger account platform_fees, beside processor_fees); a refund that gives it back posts
-- it back as a negative fee part; the platform's own books (platform_fees) post each fee collected and each given
-- back, in the transaction of the merchant's posting, keyed by the account the fee came from so that both live
-- together.
create table platform_pricing (
  account_id text not null references accounts (id),
  currency text not null check (currency ~ '^[a-z]{3}$'),
  percent_basis_points integer not null check (percent_basis_points between 0 and 10000),
  fixed_amount integer not null check (fixed_amount between 0 and 99999999),
  primary key (account_id, currency)
);

create table platform_fees (
  account_id text not null references accounts (id),
  id text not null check (id ~ '^pfee_[0-9a-f]{24}$'),
  seq bigint generated always as identity,
  type text not null check (type in ('application_fee', 'application_fee_refund')),
  -- The charge or refund whose posting carried it, and that posting's cause: each is posted once.
  source text not null check (char_length(source) between 1 and 255),
  posting text not null check (char_length(posting) between 1 and 300),
  amount_cents bigint not null check (amount_cents <> 0),
  currency text not null check (currency ~ '^[a-z]{3}$'),
  created_at timestamptz not null default now(),
  primary key (account_id, id),
  unique (account_id, posting),
  check ((type = 'application_fee') = (amount_cents > 0))
);

-- A refund is sent with the application fee given back or not, and a retry or the recovery worker sends the same.
alter table refunds add column refund_application_fee boolean not null default false;

-- A refund that gave back the platform's fee has a negative fee (the connected account gets it back).
alter table ledger_transactions drop constraint ledger_transactions_fee_cents_check;
alter table ledger_transactions add constraint ledger_transactions_fee_cents_check check (fee_cents >= 0 or type = 'refund');

-- Each ledger transaction balances, checked as it is inserted (a CHECK constraint calls it): it has two entries at
-- least, each of a known ledger account and not zero, summing to zero, its balance entries summing to its net. A
-- refusal (LG001) rolls back the business write with it. Last defined by 0025.
create or replace function ledger_balances(id text, posting text, net_cents bigint, accounts text[], cents bigint[])
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
    if accounts[i] is null or accounts[i] not in ('balance', 'processor', 'processor_fees', 'platform_fees', 'payouts_in_transit', 'bank')
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
