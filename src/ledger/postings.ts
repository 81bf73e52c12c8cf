// Every movement of money, as the ledger records it: one function per kind (movements.ts: its legs, fee and day),
// each posting balanced entries in the caller's transaction, where the business write that moves the money happens
// (docs/ledger.md has the table). Each is called by the domain's record functions, never inside a repository's
// statement. Each cause posts once, however often it is told.
import type { Transaction } from '../db/connect.js'
import type { DisputeFunds, FeePart } from '../processor/later-outcomes.js'
import type { CapturedFunds } from '../processor/processor.js'
import type { BalanceTransaction, FeeDetail } from '../schemas/balance.js'
import { disputeFee, feeTotal, paymentFee, type Pricing } from '../processor/pricing.js'
import { type LedgerAccount, MOVEMENTS } from './movements.js'
import { postPlatformFee } from './platform-fees.js'
import { availableOf, lockBalance, post } from './repository.js'

interface Money {
  account_id: string
  currency: string
}

/**
 * A charge captured, in full or in part: its amount in, less the processor's fee; pending until it is available.
 * The fee and the day are the processor's when it told them with the capture (`funds`); otherwise the pricing's,
 * a few days from when it was captured (`movedAt`, now unless said).
 */
export function postCapture(
  tx: Transaction,
  pricing: Pricing,
  charge: Money & { id: string },
  amountCents: number,
  when: { funds?: CapturedFunds | undefined; movedAt?: Date } = {},
) {
  const { funds, movedAt } = when
  return postMovement(tx, charge, {
    type: 'charge',
    source: charge.id,
    cents: amountCents,
    fees: funds
      ? toldFees(funds.fees, charge.currency, 'processor_fee')
      : paymentFee(pricing, amountCents, charge.currency),
    availableAfterDays: pricing.availableAfterDays,
    availableOn: funds && new Date(funds.availableOn),
    movedAt,
  })
}

/**
 * The fee the processor told, as the API shows it: the processor's parts of one type (its processing or dispute
 * fee), and the platform's application fee where the processor took one for it (Stripe Connect).
 */
function toldFees(parts: FeePart[], currency: string, type: FeeDetail['type']): FeeDetail[] {
  return parts
    .filter((part) => part.amountCents !== 0)
    .map((part) => ({
      type: part.keptBy === 'platform' ? 'application_fee' : type,
      amount_cents: part.amountCents,
      currency: currency as FeeDetail['currency'],
      description: part.description,
    }))
}

/**
 * A refund made: its amount out of the balance at once (the processor keeps its fee on the payment), less what it
 * gave back of the platform's fee (`given`, as the processor told it: negative parts).
 */
export function postRefund(
  tx: Transaction,
  refund: Money & { id: string; amount_cents: number },
  when: { given?: FeePart[] | undefined; movedAt?: Date | undefined } = {},
) {
  return postMovement(tx, refund, {
    type: 'refund',
    source: refund.id,
    cents: -refund.amount_cents,
    fees: toldFees(when.given ?? [], refund.currency, 'processor_fee'),
    movedAt: when.movedAt,
  })
}

/** A refund that failed after it was made: its amount back into the balance. */
export function postRefundFailure(tx: Transaction, refund: Money & { id: string; amount_cents: number }) {
  return postMovement(tx, refund, { type: 'refund_failure', source: refund.id, cents: refund.amount_cents })
}

/**
 * A dispute's money withdrawn from the balance at once: its amount, and the processor's dispute fee as it told it, or
 * the pricing's for a processor whose fees are the pricing's (DisputeFunds).
 */
export function postDisputeWithdrawal(
  tx: Transaction,
  pricing: Pricing,
  charge: Money,
  dispute: string,
  withdrawal: DisputeFunds,
) {
  return postMovement(tx, charge, {
    type: 'dispute',
    source: dispute,
    cents: -withdrawal.amountCents,
    fees: withdrawal.fees
      ? toldFees(withdrawal.fees, charge.currency, 'dispute_fee')
      : disputeFee(pricing, charge.currency),
  })
}

/**
 * A dispute won: what the processor reinstated, into the balance, with the fee it gave back (a negative fee), if it
 * did; the pricing's dispute fee is not given back.
 */
export function postDisputeReversal(tx: Transaction, charge: Money, dispute: string, reinstatement: DisputeFunds) {
  return postMovement(tx, charge, {
    type: 'dispute_reversal',
    source: dispute,
    cents: reinstatement.amountCents,
    fees: reinstatement.fees ? toldFees(reinstatement.fees, charge.currency, 'dispute_fee') : [],
  })
}

/**
 * Money between the processor and the balance: `cents` (gross, signed as it moves the balance) from the processor,
 * the fees to `processor_fees` and the platform's to `platform_fees`, the rest to the balance, available after
 * `availableAfterDays` (at once by default). An entry of nothing is left out (a free payment; the database refuses
 * zero). The platform's fee is posted in its own books too (platform-fees.ts), in the same transaction.
 */
async function postMovement(
  tx: Transaction,
  money: Money,
  movement: {
    type: BalanceTransaction['type']
    source: string
    cents: number
    fees?: FeeDetail[]
    availableAfterDays?: number
    availableOn?: Date | undefined
    movedAt?: Date | undefined
  },
) {
  const { fees = [], availableAfterDays = 0, availableOn, movedAt } = movement
  const platformFee = feeTotal(fees.filter((part) => part.type === 'application_fee'))
  const entries = MOVEMENTS[movement.type].legs({ cents: movement.cents, fee: feeTotal(fees), platformFee })
  const cause = `${movement.type}:${movement.source}`
  if (platformFee !== 0)
    await postPlatformFee(tx, { ...money, source: movement.source, cause, amountCents: platformFee })
  return post(tx, {
    accountId: money.account_id,
    type: movement.type,
    source: movement.source,
    cause,
    amountCents: movement.cents,
    fees,
    currency: money.currency,
    availableAfterDays,
    availableOn,
    movedAt,
    entries: entries.filter(([, cents]) => cents !== 0),
  })
}

/**
 * Money the account itself sends out of its balance (a fork's payout or transfer: docs/extending.md), reserved at
 * once: out of the balance, into money in transit, if what is available at `now` holds it; false if not. Under the
 * balance's lock (lockBalance), so reservations at once never overdraw it. Nothing here refuses a balance that the
 * processor took below zero on its own (a dispute lost after the money left): it is shown and reported, and only
 * new spending waits for it. It then arrives (postPayoutArrival) or comes back (postPayoutFailure, from transit).
 */
export async function reserveFromBalance(
  tx: Transaction,
  money: Money,
  source: string,
  amountCents: number,
  now: Date,
): Promise<boolean> {
  await lockBalance(tx, money.account_id, money.currency)
  if ((await availableOf(tx, money.account_id, money.currency, now)) < amountCents) return false
  await postPayout(tx, money, source, amountCents)
  return true
}

/** An account's share of a payout: out of its balance, into money in transit to the bank. */
export function postPayout(tx: Transaction, money: Money, payout: string, shareCents: number) {
  return postPayoutLeg(tx, money, payout, 'payout', -shareCents, MOVEMENTS.payout.legs({ cents: shareCents, fee: 0 }))
}

/** The payout arrived: the share moves from transit to the bank; the balance does not move. */
export function postPayoutArrival(tx: Transaction, money: Money, payout: string, shareCents: number) {
  const entries = MOVEMENTS.payout_arrival.legs({ cents: shareCents, fee: 0 })
  return postPayoutLeg(tx, money, payout, 'payout_arrival', 0, entries)
}

/** The payout failed: the share goes back into the balance, from where it was (in transit, or at the bank). */
export function postPayoutFailure(
  tx: Transaction,
  money: Money,
  payout: string,
  shareCents: number,
  from: LedgerAccount,
) {
  const entries = MOVEMENTS.payout_failure.legs({ cents: shareCents, fee: 0, from })
  return postPayoutLeg(tx, money, payout, 'payout_failure', shareCents, entries)
}

/** A leg of a payout: `balanceCents` is what it moves the balance by (its amount and net: a payout has no fee). */
function postPayoutLeg(
  tx: Transaction,
  money: Money,
  payout: string,
  type: 'payout' | 'payout_arrival' | 'payout_failure',
  balanceCents: number,
  entries: [LedgerAccount, number][],
) {
  return post(tx, {
    accountId: money.account_id,
    type,
    source: payout,
    cause: `${type}:${payout}`,
    amountCents: balanceCents,
    fees: [],
    currency: money.currency,
    availableAfterDays: 0,
    entries,
  })
}
