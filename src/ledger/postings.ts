// Every movement of money, as the ledger records it: one function per cause, each posting balanced entries in the
// caller's transaction, where the business write that moves the money happens (docs/ledger.md has the table). The
// account's `balance` moves by the net; the `processor` account is the other side of what customers paid or got
// back; `processor_fees` holds what the processor kept. Each cause posts once, however often it is told.
import type { Transaction } from '../db/connect.js'
import { disputeFee, paymentFee, type Pricing } from './pricing.js'
import { post } from './repository.js'

interface Money {
  account_id: string
  currency: string
}

/** A charge captured, in full or in part: its amount in, less the processor's fee; pending for a few days. */
export function postCapture(tx: Transaction, pricing: Pricing, charge: Money & { id: string }, amountCents: number) {
  const fees = paymentFee(pricing, amountCents, charge.currency)
  const fee = fees.reduce((sum, each) => sum + each.amount_cents, 0)
  return post(tx, {
    accountId: charge.account_id,
    type: 'charge',
    source: charge.id,
    cause: `charge:${charge.id}`,
    amountCents,
    fees,
    currency: charge.currency,
    availableAfterDays: pricing.availableAfterDays,
    entries: withoutZeros([
      ['balance', amountCents - fee],
      ['processor_fees', fee],
      ['processor', -amountCents],
    ]),
  })
}

/** A refund made: its amount out of the balance at once (the processor keeps its fee on the payment). */
export function postRefund(tx: Transaction, refund: Money & { id: string; amount_cents: number }) {
  return postAtOnce(tx, refund, { type: 'refund', source: refund.id, cents: -refund.amount_cents })
}

/** A refund that failed after it was made: its amount back into the balance. */
export function postRefundFailure(tx: Transaction, refund: Money & { id: string; amount_cents: number }) {
  return postAtOnce(tx, refund, { type: 'refund_failure', source: refund.id, cents: refund.amount_cents })
}

/** A dispute opened: its amount, and the processor's dispute fee, withdrawn from the balance at once. */
export function postDisputeWithdrawal(
  tx: Transaction,
  pricing: Pricing,
  charge: Money,
  dispute: { reference: string; amountCents: number },
) {
  const fees = disputeFee(pricing, charge.currency)
  const fee = fees.reduce((sum, each) => sum + each.amount_cents, 0)
  return post(tx, {
    accountId: charge.account_id,
    type: 'dispute',
    source: dispute.reference,
    cause: `dispute:${dispute.reference}`,
    amountCents: -dispute.amountCents,
    fees,
    currency: charge.currency,
    availableAfterDays: 0,
    entries: withoutZeros([
      ['balance', -dispute.amountCents - fee],
      ['processor_fees', fee],
      ['processor', dispute.amountCents],
    ]),
  })
}

/** A dispute won: its amount reinstated (the fee is not given back). */
export function postDisputeReversal(
  tx: Transaction,
  charge: Money,
  dispute: { reference: string; amountCents: number },
) {
  return postAtOnce(tx, charge, { type: 'dispute_reversal', source: dispute.reference, cents: dispute.amountCents })
}

/** Money between the balance and the processor, without a fee, available at once: `cents` into the balance. */
function postAtOnce(
  tx: Transaction,
  money: Money,
  movement: { type: 'refund' | 'refund_failure' | 'dispute_reversal'; source: string; cents: number },
) {
  return post(tx, {
    accountId: money.account_id,
    type: movement.type,
    source: movement.source,
    cause: `${movement.type}:${movement.source}`,
    amountCents: movement.cents,
    fees: [],
    currency: money.currency,
    availableAfterDays: 0,
    entries: [
      ['balance', movement.cents],
      ['processor', -movement.cents],
    ],
  })
}

/** An entry of nothing is no entry (a free payment, a fee larger than nothing); the database refuses zero. */
function withoutZeros<Entry extends [string, number]>(entries: Entry[]): Entry[] {
  return entries.filter(([, cents]) => cents !== 0)
}
