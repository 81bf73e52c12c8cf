-- The processor's payouts, as each account sees them (GET /v1/payouts): one row per account and payout, its share of
-- what the payout carried (the net of the account's transactions in it), written where the payout is applied to the
-- books (src/processor-events/payouts.ts, through src/payouts/repository.ts) in the same transaction as its postings.
-- The id is the processor's (Stripe: po_…), the one balance transactions name in `payout`. The status only moves
-- forward: in transit, then paid, or failed (which a paid payout may still become, when the bank returns it).
create table payouts (
  account_id text not null references accounts (id),
  id text not null check (char_length(id) between 1 and 255),
  seq bigint generated always as identity,
  amount_cents bigint not null,
  currency text not null check (currency ~ '^[a-z]{3}$'),
  status text not null check (status in ('in_transit', 'paid', 'failed')),
  arrival_date timestamptz,
  failure_code text check (char_length(failure_code) <= 255),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (account_id, id)
);
create index payouts_account_seq on payouts (account_id, seq desc);

-- The payouts applied before this migration, from their legs in the ledger, in the order they were posted: a
-- processor's payout marks its own leg with itself (payout = source). (The template's withdrawals do too, once
-- paid; a fork adds them after this migration.) What the ledger did not keep (the arrival date, the failure code)
-- stays null.
insert into payouts (account_id, id, amount_cents, currency, status, created_at, updated_at)
select t.account_id, t.source, -t.amount_cents, t.currency,
  case
    when exists (select from ledger_transactions f where f.account_id = t.account_id and f.source = t.source
      and f.type = 'payout_failure') then 'failed'
    when exists (select from ledger_transactions a where a.account_id = t.account_id and a.source = t.source
      and a.type = 'payout_arrival') then 'paid'
    else 'in_transit'
  end,
  t.created_at, t.created_at
from ledger_transactions t
where t.type = 'payout' and t.payout = t.source
order by t.seq;
