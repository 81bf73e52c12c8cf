// What Stripe kept of money, from its balance transactions: a charge's fee and the day the rest is available (its
// charge's balance transaction, expanded in an answer or read afterwards), a dispute's fee (the withdrawal's).
import type Stripe from 'stripe'
import type { FeePart } from '../later-outcomes.js'
import type { CapturedFunds } from '../processor.js'

/** What a charge or a capture asks Stripe to expand in its answer: what it kept of the money (capturedFunds). */
export const FUNDS = ['latest_charge.balance_transaction']

/**
 * What Stripe kept of a PaymentIntent's captured money and when the rest is available, from its charge's balance
 * transaction, when the answer expanded it. Left out when it is in another currency than the payment (Stripe
 * converted it to the account's): the books post the payment's own currency, by the pricing.
 */
export function capturedFunds(intent: Stripe.PaymentIntent): CapturedFunds | undefined {
  const charge = intent.latest_charge
  const txn = typeof charge === 'object' && charge !== null ? charge.balance_transaction : null
  if (typeof txn !== 'object' || txn === null || txn.currency !== intent.currency) return undefined
  return {
    fees: feePartsOf(txn),
    availableOn: new Date(txn.available_on * 1000).toISOString(),
  }
}

/**
 * What was kept, part by part, of a balance transaction's money (a charge's, a refund's, a dispute's withdrawal):
 * Stripe's fees, and on a connected account the platform's application fee (negative on a refund that gave it back).
 */
export function feePartsOf(txn: Stripe.BalanceTransaction): FeePart[] {
  return txn.fee_details.map((part) => ({
    amountCents: part.amount,
    description: part.description ?? part.type,
    ...(part.type === 'application_fee' ? { keptBy: 'platform' as const } : {}),
  }))
}

/**
 * What a refund gave back of the platform's fee, from the refund's balance transaction on a connected account
 * (negative parts); Stripe gives back none of its own fee on a refund.
 */
export function feeGivenBackBy(txn: Stripe.BalanceTransaction): FeePart[] {
  return feePartsOf(txn).filter((part) => part.keptBy === 'platform' && part.amountCents !== 0)
}
