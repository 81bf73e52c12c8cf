// The kinds of money movement, one row each: its legs (the entries it posts, by ledger account), what the processor
// keeps of it, when its net is available, and the one posting function that posts it (postings.ts, which takes its legs
// from here) with the modules that call that function. The API's types of balance transaction
// (BALANCE_TRANSACTION_TYPES) must each have a row (tsc says which is missing); the database's CHECK on
// ledger_transactions.type and its list of ledger accounts (ledger_balances, db/functions.sql), docs/ledger.md's tables
// and who calls each posting are held to this table by test/ledger/movements.test.ts. A new kind is a row here, its
// type in the API, a migration for the CHECK, a line of docs/ledger.md and its posting function.
import type { BalanceTransaction } from '../schemas/balance.js'

/** The ledger's accounts: where an entry's money is, for one of the service's accounts. */
export const LEDGER_ACCOUNTS = {
  balance:
    "what the processor owes the account: money in is pending until its transaction's `available_on`, then " +
    'available; money out counts against the available balance at once',
  processor: 'the other side of what customers paid, or were given back',
  processor_fees: 'what the processor kept',
  platform_fees:
    "what the platform kept (Stripe Connect's application fee, taken by the processor from a payment on the " +
    "account's connected account); given back, negative",
  payouts_in_transit: 'paid out, on its way to the bank',
  bank: 'paid out, arrived at the bank',
} as const
export type LedgerAccount = keyof typeof LEDGER_ACCOUNTS

/**
 * What a movement is posted from: `cents`, its gross signed as it moves the balance (a payout's legs: the account's
 * share, positive), `fee`, what was kept of it, of which `platformFee` the platform's (the rest the processor's),
 * and for a failed payout `from`, where the money comes back from.
 */
export interface LegAmounts {
  cents: number
  fee: number
  platformFee?: number
  from?: LedgerAccount | undefined
}

export interface MovementKind {
  /** Its entries; they sum to zero. */
  legs(amounts: LegAmounts): [LedgerAccount, number][]
  /** What the processor keeps of it. */
  fee: string
  /** When its net is available. */
  available: string
  /** The function of src/ledger/postings.ts that posts it, and the modules of src that call it (and none other). */
  postedBy: { posting: string; callers: readonly string[] }
}

/**
 * Between the processor and the balance: the gross from the processor, the fee to whoever kept it (the processor,
 * the platform), the net to the balance.
 */
const throughProcessor = ({ cents, fee, platformFee = 0 }: LegAmounts): [LedgerAccount, number][] => [
  ['balance', cents - fee],
  ['processor_fees', fee - platformFee],
  ['platform_fees', platformFee],
  ['processor', -cents],
]

/** A payout's arrival moves no balance: it is a ledger transaction the API's balance transactions leave out. */
export type LedgerTransactionType = BalanceTransaction['type'] | 'payout_arrival'

export const MOVEMENTS = {
  charge: {
    legs: throughProcessor,
    fee:
      'the processor’s (Stripe’s, with the platform’s application fee on a connected account), else the ' +
      'pricing’s (2.9% + 30)',
    available: 'the processor’s day, else FUNDS_AVAILABLE_AFTER_DAYS (2) later',
    postedBy: {
      posting: 'postCapture',
      callers: ['src/charges/record-charge.ts', 'src/charges/settle.ts', 'src/processor-events/apply.ts'],
    },
  },
  refund: {
    legs: throughProcessor,
    fee:
      '0 (the payment’s fee is not given back), less the platform’s fee given back with it ' +
      '(`refund_application_fee`)',
    available: 'at once',
    postedBy: { posting: 'postRefund', callers: ['src/refunds/refunds.ts', 'src/processor-events/apply.ts'] },
  },
  refund_failure: {
    legs: throughProcessor,
    fee: '0',
    available: 'at once',
    postedBy: { posting: 'postRefundFailure', callers: ['src/processor-events/apply.ts'] },
  },
  dispute: {
    legs: throughProcessor,
    fee: 'the processor’s (Stripe’s), else the pricing’s (15.00)',
    available: 'at once',
    postedBy: { posting: 'postDisputeWithdrawal', callers: ['src/processor-events/apply.ts'] },
  },
  dispute_reversal: {
    legs: throughProcessor,
    fee: 'what the processor gave back of its fee (Stripe: 0), else 0',
    available: 'at once',
    postedBy: { posting: 'postDisputeReversal', callers: ['src/processor-events/apply.ts'] },
  },
  payout: {
    legs: ({ cents }) => [
      ['balance', -cents],
      ['payouts_in_transit', cents],
    ],
    fee: '0',
    available: 'at once',
    postedBy: { posting: 'postPayout', callers: ['src/processor-events/payouts.ts'] },
  },
  payout_arrival: {
    legs: ({ cents }) => [
      ['payouts_in_transit', -cents],
      ['bank', cents],
    ],
    fee: '0',
    available: 'moves no balance',
    postedBy: { posting: 'postPayoutArrival', callers: ['src/processor-events/payouts.ts'] },
  },
  payout_failure: {
    legs: ({ cents, from = 'payouts_in_transit' }) => [
      ['balance', cents],
      [from, -cents],
    ],
    fee: '0',
    available: 'at once',
    postedBy: { posting: 'postPayoutFailure', callers: ['src/processor-events/payouts.ts'] },
  },
} as const satisfies Record<LedgerTransactionType, MovementKind>
