// What the processor tells later, applied to the books: each change moves a charge, a refund or a dispute forward
// (never back), with the event the service sends for it, in the caller's transaction. Every rule looks at where
// the object is now, so a change told twice, or after a later one, changes nothing the second time. A change for
// an object the books do not hold yet (a webhook that overtook the answer it follows) waits; one for an object
// this service did not make is ignored; neither is dropped silently (src/processor-events/inbox.ts keeps both).
import type { Transaction } from '../db/connect.js'
import { insertEvent } from '../events/events.js'
import {
  addRefunded,
  type ChargeRow,
  lockChargeById,
  moveCharge,
  setDispute,
  toCharge,
  whereMade,
} from '../charges/repository.js'
import { availableOf, postedFor } from '../ledger/repository.js'
import { balancesOverdrawn } from '../observability/metrics.js'
import type { DisputeState, PaymentState, ProcessorChange, RefundState } from '../processor/later-outcomes.js'
import { chargeMove, type LaterSettings } from './charge-moves.js'
import { APPLIED, type Applied, type EventOrigin, ignored, waiting } from './applied.js'
import { applyPayout } from './payouts.js'
import {
  awaitsDecision,
  insertRefundMadeAtProcessor,
  lockRefundOfProcessor,
  markRefundFailed,
  markRefundRefused,
  markRefundSucceeded,
  type RefundRow,
  toRefund,
} from '../refunds/repository.js'
import type { Charge } from '../schemas/charge.js'
import {
  postCapture,
  postDisputeReversal,
  postDisputeWithdrawal,
  postRefund,
  postRefundFailure,
} from '../ledger/postings.js'

export type { Applied, LaterSettings }

/**
 * Applies one change an event of `processorAccount` tells (null: the platform's own account). What it names is found
 * by the ids the processor keeps for the service (a payment's charge_id, a refund's operation id), but those are
 * only metadata that whoever holds the processor account can write: a change applies only to a charge made on that
 * very processor account, as that very payment (notHeldThere). A connected account can never move another account's.
 */
export function applyChange(
  tx: Transaction,
  change: ProcessorChange,
  settings: LaterSettings,
  origin: EventOrigin,
): Promise<Applied> {
  const { processorAccount } = origin
  switch (change.object) {
    case 'payment':
      return applyPayment(tx, change, settings, processorAccount)
    case 'refund':
      return applyRefund(tx, change, processorAccount)
    case 'dispute':
      return applyDispute(tx, change, settings, processorAccount)
    case 'payout':
      return applyPayout(tx, change, origin)
  }
}

/** Why a charge is not the one a change of `processorAccount` about `payment` may touch, if it is not. */
function notHeldThere(
  charge: Pick<ChargeRow, 'id' | 'processor_account' | 'processor_reference'>,
  payment: string,
  processorAccount: string | null,
): string | undefined {
  if (charge.processor_account !== processorAccount)
    return (
      `charge ${charge.id} was made on ${charge.processor_account ?? "the platform's account"}, not on ` +
      `${processorAccount ?? "the platform's account"}`
    )
  if (charge.processor_reference !== payment)
    return `charge ${charge.id} is payment ${charge.processor_reference}, not ${payment}`
  return undefined
}

async function applyPayment(
  tx: Transaction,
  payment: PaymentState,
  settings: LaterSettings,
  processorAccount: string | null,
): Promise<Applied> {
  if (!payment.chargeId) return ignored(`payment ${payment.reference} was not made by this service`)
  const charge = await lockChargeById(tx, payment.chargeId)
  if (!charge) return waiting(`charge ${payment.chargeId} of payment ${payment.reference} is not recorded yet`)
  const elsewhere = notHeldThere(charge, payment.reference, processorAccount)
  if (elsewhere) return ignored(elsewhere)
  const move = chargeMove(charge, payment, settings)
  if ('wait' in move) return waiting(move.wait)
  if ('ignore' in move) return ignored(move.ignore)
  const moved = await moveCharge(tx, charge, move.set)
  await insertEvent(tx, charge.account_id, move.event, { object: toCharge(moved) })
  // Captured at the processor (a debit settled, an authentication passed, a capture made in its dashboard).
  if (moved.captured && !charge.captured)
    await postCapture(tx, settings.pricing, moved, moved.amount_captured_cents, { funds: payment.funds })
  return APPLIED
}

async function applyRefund(tx: Transaction, refund: RefundState, processorAccount: string | null): Promise<Applied> {
  const known = await lockRefundOfProcessor(tx, refund)
  if (!known && refund.operationId)
    return waiting(`refund ${refund.reference} (operation ${refund.operationId}) is not recorded yet`)
  if (!known) return recordRefundMadeAtProcessor(tx, refund, processorAccount)
  const madeAt = await whereMade(tx, known.charge_id)
  const elsewhere = madeAt && notHeldThere(madeAt, refund.paymentReference, processorAccount)
  if (elsewhere) return ignored(`refund ${known.id}: ${elsewhere}`)
  const failed = refund.status === 'failed' || refund.status === 'canceled'
  if (awaitsDecision(known)) return decideRefund(tx, known, refund, failed)
  if (known.status === 'pending') return waiting(`refund ${known.id} is being recorded`)
  if (known.status === 'failed' || !failed) return ignored(`refund ${known.id} is ${known.status} already`)
  const row = await markRefundFailed(tx, known, refund.failureReason ?? 'unknown')
  await postRefundFailure(tx, row)
  const charge = await addRefunded(tx, { account_id: known.account_id, id: known.charge_id }, -known.amount_cents)
  await insertEvent(tx, known.account_id, 'charge.refund.failed', {
    object: toCharge(charge),
    refund: toRefund(row),
  })
  return APPLIED
}

/**
 * A refund the processor received and decided later (RefundOutcome.decidedLater): refunded, posted now; or refused,
 * its reservation given back. News that it is still pending changes nothing.
 */
async function decideRefund(tx: Transaction, known: RefundRow, refund: RefundState, failed: boolean): Promise<Applied> {
  if (refund.status === 'pending') return ignored(`refund ${known.id} awaits the processor's decision`)
  if (failed) {
    const refused = await markRefundRefused(tx, known, refund.failureReason ?? 'unknown')
    await insertEvent(tx, known.account_id, 'charge.refund.failed', { object: refused.charge, refund: refused.refund })
    return APPLIED
  }
  const settled = await markRefundSucceeded(tx, known, refund.reference)
  await postRefund(tx, known)
  await insertEvent(tx, known.account_id, 'charge.refunded', { object: settled.charge, refund: settled.refund })
  return APPLIED
}

/** A refund made at the processor (its dashboard): it becomes a refund of the books, marked as such. */
async function recordRefundMadeAtProcessor(
  tx: Transaction,
  refund: RefundState,
  processorAccount: string | null,
): Promise<Applied> {
  if (!refund.chargeId) return ignored(`refund ${refund.reference} is of a payment this service did not make`)
  const charge = await lockChargeById(tx, refund.chargeId)
  if (!charge) return waiting(`charge ${refund.chargeId} of refund ${refund.reference} is not recorded yet`)
  const elsewhere = notHeldThere(charge, refund.paymentReference, processorAccount)
  if (elsewhere) return ignored(elsewhere)
  const failed = refund.status === 'failed' || refund.status === 'canceled'
  const left = charge.amount_captured_cents - charge.amount_refunded_cents - charge.amount_refund_pending_cents
  // More than the books hold: the news of a capture made at the processor, or of an earlier refund's failure, may
  // still be on its way. It waits (and, waiting for an hour, is reported as a discrepancy).
  if (!failed && refund.amountCents > left)
    return waiting(
      `refund ${refund.reference} of ${refund.amountCents} exceeds the ${left} the books hold on charge ${charge.id}`,
    )
  const row = await insertRefundMadeAtProcessor(tx, charge, {
    amountCents: refund.amountCents,
    failureReason: failed ? (refund.failureReason ?? 'unknown') : null,
    processorReference: refund.reference,
  })
  // Its twin (the same refund told by another event) was recorded first: under the payment's lock
  // (src/processor-events/inbox.ts) the lookup above finds it, so only a writer that does not take that lock gets here.
  if (!row) return ignored(`refund ${refund.reference} is recorded already`)
  if (!failed) await postRefund(tx, row, { given: refund.given })
  const updated = failed ? charge : await addRefunded(tx, charge, refund.amountCents)
  await insertEvent(tx, charge.account_id, failed ? 'charge.refund.failed' : 'charge.refunded', {
    object: toCharge(updated),
    refund: toRefund(row),
  })
  return APPLIED
}

const DISPUTE_ORDER: Record<DisputeState['status'], number> = { needs_response: 0, under_review: 1, won: 2, lost: 2 }

/**
 * A dispute's course and its money, each applied on its own, since Stripe tells them apart (charge.dispute.created
 * carries no money; charge.dispute.funds_withdrawn and funds_reinstated do) and in any order: its status moves only
 * forward; a withdrawal or a reinstatement is posted once, exactly as the processor told it, when an event carries it,
 * whatever that event's status (a late funds_withdrawn after the dispute closed still posts). An inquiry, which
 * withdraws nothing, posts nothing.
 */
async function applyDispute(
  tx: Transaction,
  dispute: DisputeState,
  settings: LaterSettings,
  processorAccount: string | null,
): Promise<Applied> {
  if (!dispute.chargeId) return ignored(`dispute ${dispute.reference} is of a payment this service did not make`)
  const charge = await lockChargeById(tx, dispute.chargeId)
  if (!charge) return waiting(`charge ${dispute.chargeId} of dispute ${dispute.reference} is not recorded yet`)
  const elsewhere = notHeldThere(charge, dispute.paymentReference, processorAccount)
  if (elsewhere) return ignored(elsewhere)
  const current = charge.dispute
  if (current && current.processor_reference !== dispute.reference)
    return ignored(`charge ${charge.id} is disputed by ${current.processor_reference}, not ${dispute.reference}`)
  const moves = !current || DISPUTE_ORDER[current.status] < DISPUTE_ORDER[dispute.status]
  const posted = await postedFor(tx, charge.account_id, dispute.reference)
  const withdraws = dispute.withdrawal !== undefined && !posted.has(`dispute:${dispute.reference}`)
  const reinstates = dispute.reinstatement !== undefined && !posted.has(`dispute_reversal:${dispute.reference}`)
  // Posted each time it is told: a cause posted already adds nothing, or, told with another amount, is refused.
  if (dispute.withdrawal)
    await postDisputeWithdrawal(tx, settings.pricing, charge, dispute.reference, dispute.withdrawal)
  if (dispute.reinstatement) await postDisputeReversal(tx, charge, dispute.reference, dispute.reinstatement)
  if (!moves && !withdraws && !reinstates)
    return ignored(`dispute ${dispute.reference} is ${current?.status} already, and its money is posted`)
  if (moves) {
    const next: NonNullable<Charge['dispute']> = {
      status: dispute.status,
      reason: dispute.reason,
      amount_cents: dispute.amountCents,
      processor_reference: dispute.reference,
      created_at: current?.created_at ?? new Date().toISOString(),
    }
    const moved = await setDispute(tx, charge, next)
    const closed = dispute.status === 'won' || dispute.status === 'lost'
    const type = closed ? 'charge.dispute.closed' : current ? 'charge.dispute.updated' : 'charge.dispute.created'
    await insertEvent(tx, charge.account_id, type, { object: toCharge(moved) })
  }
  return withdraws ? overdrawnBy(tx, charge, `dispute ${dispute.reference}`) : APPLIED
}

/**
 * After the processor took money on its own: if the account's available balance is now below zero (its money was
 * paid out before, or is not available yet), it is posted all the same, never refused, and said: the event's note,
 * and a metric. New payouts wait until charges bring it back (docs/ledger.md).
 */
async function overdrawnBy(tx: Transaction, charge: ChargeRow, cause: string): Promise<Applied> {
  const available = await availableOf(tx, charge.account_id, charge.currency, new Date())
  if (available >= 0) return APPLIED
  return {
    status: 'applied',
    note: `${cause} left account ${charge.account_id}'s ${charge.currency} balance at ${available}`,
    afterCommit: [() => balancesOverdrawn.inc({ cause: cause.split(' ')[0] })],
  }
}
