// A payout as the account sees it: its share of one of the processor's payouts to the bank (docs/ledger.md,
// "Payouts"), and the query of their list.
import { Type, type Static } from 'typebox'
import { BalanceTransactionId } from './balance.js'
import { Currency, PayoutId, Timestamp } from './common.js'
import { ListOf, PageQuery } from './page.js'

export const PAYOUT_STATUSES = ['in_transit', 'paid', 'failed'] as const
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number]

const NullableTransaction = (description: string) => Type.Union([BalanceTransactionId, Type.Null()], { description })

export const Payout = Type.Object(
  {
    id: PayoutId,
    object: Type.Literal('payout'),
    amount_cents: Type.Integer({
      description:
        'This account’s share of the payout: the net of its balance transactions the payout carried (one payout ' +
        'of the processor carries the money of every account on its processor account).',
    }),
    currency: Currency,
    status: Type.Enum([...PAYOUT_STATUSES], {
      description:
        '`in_transit`: on its way to the bank; `paid`: arrived; `failed`: the bank refused or returned it, and ' +
        'the amount is back in the balance (a `payout_failure` transaction; a paid payout can still fail).',
    }),
    arrival_date: Type.Union([Timestamp, Type.Null()], {
      description: 'When the processor expects it (or saw it) at the bank; `null` when it has not said.',
    }),
    failure_code: Type.Union([Type.String(), Type.Null()], {
      description: 'The processor’s reason (Stripe: `account_closed`, `no_account`, …); `null` unless failed.',
    }),
    balance_transaction: NullableTransaction(
      'The `payout` balance transaction that took the amount out of the balance; `null` when the share is zero.',
    ),
    failure_balance_transaction: NullableTransaction(
      'The `payout_failure` balance transaction that gave the amount back; `null` unless failed.',
    ),
    created_at: { ...Timestamp, description: 'When the books learnt what the payout carried.' },
  },
  {
    title: 'Payout',
    examples: [
      {
        id: 'po_1QxExample0000000000000',
        object: 'payout',
        amount_cents: 9_410,
        currency: 'usd',
        status: 'paid',
        arrival_date: '2026-12-08T00:00:00.000Z',
        failure_code: null,
        balance_transaction: 'txn_9a8b7c6d5e4f3a2b1c0d9e8f',
        failure_balance_transaction: null,
        created_at: '2026-12-07T10:00:00.000Z',
      },
    ],
  },
)
export type Payout = Static<typeof Payout>
export const PayoutList = ListOf(Payout)

export const PayoutParams = Type.Object({ id: PayoutId })

export const ListPayoutsQuery = Type.Object(
  {
    ...PageQuery(PayoutId),
    status: Type.Optional(Type.Enum([...PAYOUT_STATUSES], { description: 'Only payouts in this status.' })),
  },
  { additionalProperties: false },
)
