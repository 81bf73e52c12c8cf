// A refund in brandur's atomic phases, so that no lock or connection is held while the processor is asked:
//   1. reserve: lock the charge briefly, check what is left, write the refund pending (its own transaction,
//      fenced by the key's token: operation.reserve)
//   2. call out: the processor, with the claim's operation id as its idempotency key
//   3. record and complete: mark it succeeded, in the transaction that stores the response (operation.complete)
// A reservation whose operation never went downstream is given back with the key (the Recovery's release, in
// src/refunds/recovery.ts); one whose outcome is unknown stays until a retry or the recovery worker settles it.
import type { Transaction } from '../db/connect.js'
import { insertEvent } from '../events/events.js'
import type { RouteResponse } from '../idempotency/response.js'
import type { RefundOutcome, RefundRequest } from '../processor/processor.js'
import { Problem } from '../problems.js'
import { lockCharge } from '../charges/repository.js'
import { postRefund } from '../ledger/postings.js'
import {
  awaitRefundDecision,
  findRefundByOperation,
  insertPendingRefund,
  markRefundSucceeded,
  type RefundRow,
} from './repository.js'

export interface RefundReservation {
  refund: RefundRow
  /** Where the refund goes: the charge's payment at the processor, on the processor account it was made on. */
  payment: RefundedPayment
}

export interface RefundedPayment {
  reference: string
  processorAccount: string | null
}

/** Phase 1. A retry of the same operation finds its pending refund again instead of reserving twice. */
export async function reserveRefund(
  tx: Transaction,
  request: {
    accountId: string
    chargeId: string
    amountCents: number | undefined
    refundApplicationFee: boolean
    operationId: string
  },
): Promise<RefundReservation> {
  const charge = await lockCharge(tx, request.accountId, request.chargeId)
  if (!charge) throw new Problem('resource-not-found', `No charge ${request.chargeId}.`)
  const payment = { reference: charge.processor_reference ?? charge.id, processorAccount: charge.processor_account }
  const existing = await findRefundByOperation(tx, request.operationId)
  if (existing?.status === 'pending') return { refund: existing, payment }
  if (charge.status !== 'succeeded') {
    throw new Problem(
      'charge-not-refundable',
      `Charge ${charge.id} is ${charge.status}: only captured money can be refunded.`,
    )
  }
  const remaining = charge.amount_captured_cents - charge.amount_refunded_cents - charge.amount_refund_pending_cents
  if (remaining === 0) {
    throw new Problem(
      'charge-not-refundable',
      `Charge ${charge.id} is already fully ` +
        `refunded${charge.amount_refund_pending_cents ? ', counting refunds in progress' : ''}.`,
    )
  }
  const amountCents = request.amountCents ?? remaining
  if (amountCents > remaining) {
    throw new Problem(
      'refund-exceeds-charge',
      `A refund of ${amountCents} exceeds the ${remaining} left of charge ${charge.id}.`,
      {
        extensions: { amount_refundable_cents: remaining },
      },
    )
  }
  const refund = { amountCents, refundApplicationFee: request.refundApplicationFee }
  return { refund: await insertPendingRefund(tx, charge, refund, request.operationId), payment }
}

/** What the processor is sent for a reserved refund: the route sends it, the recovery worker asks about it. */
export function refundCall(
  refund: { account_id: string; amount_cents: number; refund_application_fee: boolean },
  payment: RefundedPayment,
  idempotencyKey: string,
): RefundRequest {
  return {
    chargeReference: payment.reference,
    amountCents: refund.amount_cents,
    accountId: refund.account_id,
    processorAccount: payment.processorAccount,
    // Only a payment made on a connected account paid the platform a fee to give back.
    ...(refund.refund_application_fee && payment.processorAccount !== null ? { refundApplicationFee: true } : {}),
    idempotencyKey,
  }
}

/**
 * Phase 3: what the processor did becomes the refund, its money leaves the balance (the ledger's `refund`, with the
 * platform's fee it gave back), and the response a request for it returns.
 */
export async function recordRefund(tx: Transaction, refund: RefundRow, outcome: RefundOutcome): Promise<RouteResponse> {
  if (outcome.decidedLater) {
    // Received, decided later (src/processor-events/apply.ts): pending, answered 202, nothing posted yet.
    const waiting = await awaitRefundDecision(tx, refund, outcome.processorReference)
    await insertEvent(tx, refund.account_id, 'charge.refund.pending', {
      object: waiting.charge,
      refund: waiting.refund,
    })
    return { status: 202, location: `/v1/refunds/${waiting.refund.id}`, body: waiting.refund }
  }
  const settled = await markRefundSucceeded(tx, refund, outcome.processorReference)
  await postRefund(tx, refund, { given: outcome.given })
  await insertEvent(tx, refund.account_id, 'charge.refunded', { object: settled.charge, refund: settled.refund })
  return { status: 201, location: `/v1/refunds/${settled.refund.id}`, body: settled.refund }
}
