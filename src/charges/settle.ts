// Capturing and voiding an authorization, in brandur's phases, so that a retry or a race can never move money twice:
//   1. reserve: under the charge's row lock (a short transaction, fenced by the key's token: operation.reserve), check
//      that it awaits capture and that nothing else is under way, and write this operation as its pending one
//      (with the operation id the processor gets)
//   2. call out: the processor, outside any transaction
//   3. record: the charge captured (or voided, or expired) and its event, where the pending operation is still
//      this one, in the transaction that completes the key
// A second capture with a new key finds the first pending or done and is refused; a retry of the same operation
// finds its own pending operation and goes on with it.
import type { Transaction } from '../db/connect.js'
import { insertEvent } from '../events/events.js'
import type { RouteResponse } from '../idempotency/response.js'
import type { EventType } from '../schemas/webhook.js'
import { postCapture } from '../ledger/postings.js'
import type { Pricing } from '../processor/pricing.js'
import type { SettlementOutcome } from '../processor/processor.js'
import { Problem } from '../problems.js'
import {
  awaitDecision,
  type ChargeRow,
  lockCharge,
  type Settled,
  setPendingOperation,
  settlePendingOperation,
  toCharge,
} from './repository.js'

export type Settlement = 'capture' | 'void'

export interface Reserved {
  charge: ChargeRow
  /** What is captured (the whole authorization unless the request said less); 0 for a void. */
  amountCents: number
}

/** Phase 1. Refuses with a problem the client can act on; never with an idempotency error. */
export async function reserveSettlement(
  tx: Transaction,
  request: {
    accountId: string
    chargeId: string
    kind: Settlement
    amountCents?: number | undefined
    operationId: string
  },
): Promise<Reserved> {
  const charge = await lockCharge(tx, request.accountId, request.chargeId)
  if (!charge) throw new Problem('resource-not-found', `No charge ${request.chargeId}.`)
  if (charge.pending_operation_id === request.operationId)
    return { charge, amountCents: request.kind === 'capture' ? pendingCaptureOf(charge) : 0 }
  if (charge.pending_operation) {
    throw new Problem(
      'charge-operation-in-progress',
      `A ${charge.pending_operation} of charge ${charge.id} is under way; its outcome decides this one.`,
      {
        headers: { 'retry-after': '1' },
      },
    )
  }
  if (charge.status !== 'requires_capture') {
    const state =
      charge.status === 'succeeded' ? 'already captured' : charge.status === 'failed' ? 'declined' : charge.status
    throw new Problem(
      'charge-not-capturable',
      `Charge ${charge.id} is ${state}: there is no authorization to ${request.kind}.`,
      {
        extensions: { charge_status: charge.status },
      },
    )
  }
  const amountCents = request.kind === 'capture' ? (request.amountCents ?? charge.amount_cents) : 0
  if (amountCents > charge.amount_cents) {
    throw new Problem(
      'capture-exceeds-authorization',
      `A capture of ${amountCents} exceeds the ${charge.amount_cents} authorized on charge ${charge.id}.`,
      {
        extensions: { amount_capturable_cents: charge.amount_cents },
      },
    )
  }
  const reserved = await setPendingOperation(tx, charge, {
    kind: request.kind,
    operationId: request.operationId,
    amountCents: amountCents || null,
  })
  return { charge: reserved, amountCents }
}

/** What a pending capture captures: written with it when it was reserved. */
export function pendingCaptureOf(charge: ChargeRow): number {
  if (charge.pending_amount_cents === null) throw new Error(`charge ${charge.id} has no capture pending`)
  return charge.pending_amount_cents
}

/**
 * Phase 3 of a capture: what was captured, posted less the processor's fee; the rest of the authorization released.
 * One the processor decides later waits for its news (recordDecidedLater), and nothing is posted yet.
 */
export async function recordCapture(
  tx: Transaction,
  pricing: Pricing,
  charge: ChargeRow,
  amountCents: number,
  /** The processor's answer to the capture: what it kept, when it said. */
  outcome: SettlementOutcome,
): Promise<RouteResponse> {
  if (outcome.decidedLater) return recordDecidedLater(tx, charge, 'charge.capture_pending')
  const captured = { status: 'succeeded', captured: true, amount_captured_cents: amountCents } as const
  const response = await recordSettlement(tx, charge, captured, 'charge.captured')
  await postCapture(tx, pricing, charge, amountCents, { funds: outcome.funds })
  return response
}

/**
 * Phase 3 of a void: the authorization released; `expired` when the expiry worker voided it. One the processor
 * decides later waits for its news.
 */
export function recordVoid(
  tx: Transaction,
  charge: ChargeRow,
  status: 'voided' | 'expired',
  outcome: SettlementOutcome,
): Promise<RouteResponse> {
  if (outcome.decidedLater) return recordDecidedLater(tx, charge, 'charge.void_pending')
  return recordSettlement(tx, charge, { status }, status === 'voided' ? 'charge.voided' : 'charge.expired')
}

/**
 * A capture or void the processor received and decides later: the charge says so (capture_pending, void_pending),
 * its event tells it, and the answer is 202, the request accepted but not done. Its decision comes as the
 * processor's news (src/processor-events/charge-moves.ts).
 */
async function recordDecidedLater(tx: Transaction, charge: ChargeRow, eventType: EventType): Promise<RouteResponse> {
  const row = await awaitDecision(tx, charge)
  if (!row) throw new Error(`charge ${charge.id} no longer has this ${charge.pending_operation} pending`)
  const waiting = toCharge(row)
  await insertEvent(tx, row.account_id, eventType, { object: waiting })
  return { status: 202, body: waiting }
}

/** The charge changed as settled, where this operation is still the pending one, and its event. */
async function recordSettlement(
  tx: Transaction,
  charge: ChargeRow,
  change: Settled,
  eventType: EventType,
): Promise<RouteResponse> {
  const row = await settlePendingOperation(tx, charge, change)
  if (!row) throw new Error(`charge ${charge.id} no longer has this ${charge.pending_operation} pending`)
  const settled = toCharge(row)
  await insertEvent(tx, row.account_id, eventType, { object: settled })
  return { status: 200, body: settled }
}
