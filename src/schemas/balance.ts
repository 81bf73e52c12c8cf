// The account's balance and its balance transactions: the API's view of the ledger (src/ledger/, docs/ledger.md).
import { Type, type Static } from 'typebox'
import { Currency, PayoutId, ResourceId, Timestamp } from './common.js'
import { ListOf, PageQuery } from './page.js'

export const BalanceTransactionId = ResourceId('BalanceTransactionId')

export const BALANCE_TRANSACTION_TYPES = [
  'charge',
  'refund',
  'refund_failure',
  'dispute',
  'dispute_reversal',
  'payout',
  'payout_failure',
] as const

const SignedCents = Type.Integer({ minimum: -999_999_999_999, maximum: 999_999_999_999 })

const Funds = Type.Array(Type.Object({ amount_cents: SignedCents, currency: Currency }, { title: 'BalanceAmount' }), {
  description: 'One amount per currency the account has moved money in, by currency.',
})

export const Balance = Type.Object(
  {
    object: Type.Literal('balance'),
    available: { ...Funds, description: 'What could be paid out now, per currency; negative when the account owes.' },
    pending: {
      ...Funds,
      description: 'What came in and is not available yet (before each transaction’s `available_on`).',
    },
  },
  {
    title: 'Balance',
    examples: [
      {
        object: 'balance',
        available: [{ amount_cents: 9_410, currency: 'usd' }],
        pending: [{ amount_cents: 2_397, currency: 'usd' }],
      },
    ],
  },
)
export type Balance = Static<typeof Balance>

export const FeeDetail = Type.Object(
  {
    type: Type.Enum(['processor_fee', 'dispute_fee', 'application_fee'], {
      description:
        '`processor_fee`: the processor’s price for a payment; `dispute_fee`: its price for a dispute; ' +
        '`application_fee`: the platform’s, on a payment made on the account’s connected account (Stripe Connect).',
    }),
    amount_cents: {
      ...SignedCents,
      description: 'Negative when given back: a refund that gave back the platform’s fee.',
    },
    currency: Currency,
    description: Type.String(),
  },
  { title: 'FeeDetail' },
)
export type FeeDetail = Static<typeof FeeDetail>

export const BalanceTransaction = Type.Object(
  {
    id: BalanceTransactionId,
    object: Type.Literal('balance_transaction'),
    type: Type.Enum([...BALANCE_TRANSACTION_TYPES], {
      description:
        '`charge`: a charge captured; `refund`: a refund made; `refund_failure`: a refund that failed later, its ' +
        'money back; `dispute`: a dispute’s amount and fee withdrawn; `dispute_reversal`: a won dispute’s amount ' +
        'reinstated; `payout`: paid out to the bank; `payout_failure`: a payout that failed, its money back.',
    }),
    source: Type.String({
      description: 'What moved the money: the charge (`ch_…`), the refund (`re_…`), the dispute (the processor’s id).',
    }),
    amount_cents: { ...SignedCents, description: 'Gross: positive into the balance, negative out of it.' },
    fee_cents: {
      ...SignedCents,
      description:
        'What the processor and the platform kept: the sum of `fee_details`; negative on a refund that gave back the ' +
        'platform’s fee.',
    },
    fee_details: Type.Array(FeeDetail),
    net_cents: { ...SignedCents, description: '`amount_cents - fee_cents`: what the balance moved by.' },
    currency: Currency,
    available_on: { ...Timestamp, description: 'When the net is available to pay out.' },
    status: Type.Enum(['pending', 'available'], {
      description: 'Whether `available_on` has come; money out (a negative net) counts as available at once.',
    }),
    payout: Type.Union([PayoutId, Type.Null()], {
      description: 'The payout (`po_…`, GET /v1/payouts/{id}) that carried it to the bank; `null` until one has.',
    }),
    created_at: Timestamp,
  },
  {
    title: 'BalanceTransaction',
    examples: [
      {
        id: 'txn_4c1e0d2b9a8f4e6d7c5b3a21',
        object: 'balance_transaction',
        type: 'charge',
        source: 'ch_5f0c2a9be41d4c7a8e3b1f60',
        amount_cents: 2_500,
        fee_cents: 103,
        fee_details: [{ type: 'processor_fee', amount_cents: 103, currency: 'usd', description: '2.9% + 30' }],
        net_cents: 2_397,
        currency: 'usd',
        available_on: '2026-12-06T10:00:00.000Z',
        status: 'pending',
        payout: null,
        created_at: '2026-12-04T10:00:00.000Z',
      },
    ],
  },
)
export type BalanceTransaction = Static<typeof BalanceTransaction>
export const BalanceTransactionList = ListOf(BalanceTransaction)

export const BalanceTransactionParams = Type.Object({ id: BalanceTransactionId })

export const ListBalanceTransactionsQuery = Type.Object(
  {
    ...PageQuery(BalanceTransactionId),
    type: Type.Optional(Type.Enum([...BALANCE_TRANSACTION_TYPES], { description: 'Only transactions of this type.' })),
    source: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        pattern: '^[A-Za-z0-9_]+$',
        description: 'Only the transactions of this source (a charge `ch_…`, refund `re_…`, dispute).',
      }),
    ),
    payout: Type.Optional({ ...PayoutId, description: 'Only the transactions that payout carried.' }),
  },
  { additionalProperties: false },
)
