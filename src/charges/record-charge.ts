// Records a charge as the processor reported it, and says what the request that asked for it returns: 201 with
// the charge, or 402 with the decline. The route and the recovery worker both end a charge here, so a settled
// unknown outcome replays the very bytes a live request would have sent. The charge is built here, so its
// write needs no answer: the charge and its event go out together, without waiting for each other.
import type { Transaction } from '../db/connect.js'
import { insertEvent } from '../events/events.js'
import type { RouteResponse } from '../idempotency/response.js'
import { postCapture } from '../ledger/postings.js'
import type { Pricing } from '../processor/pricing.js'
import type { CapturedFunds, ChargeOutcome } from '../processor/processor.js'
import { PROBLEM_CONTENT_TYPE, problemBody } from '../problems.js'
import type { Charge, CreateChargeBody } from '../schemas/charge.js'
import type { EventType } from '../schemas/webhook.js'
import { insertCharge, newChargeRow, toCharge } from './repository.js'
import type { AuthenticatedAccount } from '../accounts/api-keys.js'

export async function recordCharge(
  tx: Transaction,
  chargeId: string,
  /** The account, and the processor account the charge was made on. */
  account: AuthenticatedAccount,
  input: CreateChargeBody,
  outcome: ChargeOutcome,
  /** What the processor keeps of a captured charge, posted with it. */
  pricing: Pricing,
  /** Set for an authorization (capture: false): until when it may be captured. */
  authorizationExpiresAt?: Date,
): Promise<RouteResponse> {
  const row = newChargeRow(chargeId, account, input, outcome, authorizationExpiresAt)
  const charge = toCharge(row)
  await Promise.all([
    insertCharge(tx, row),
    insertEvent(tx, account.id, CHARGE_EVENT[charge.status], { object: charge }, row.created_at),
    row.captured && postCapture(tx, pricing, row, row.amount_captured_cents, { funds: fundsOf(outcome) }),
  ])
  if (charge.status === 'failed') {
    const body = problemBody('card-declined', charge.failure_message ?? 'The card was declined.', {
      decline_code: charge.failure_code,
      charge: charge.id,
    })
    return { status: 402, contentType: PROBLEM_CONTENT_TYPE, body }
  }
  return { status: 201, location: `/v1/charges/${charge.id}`, body: charge }
}

/** What the processor said it kept of a captured charge, if it did. */
function fundsOf(outcome: ChargeOutcome): CapturedFunds | undefined {
  return outcome.status === 'succeeded' ? outcome.funds : undefined
}

/** The event a charge's status is told by, when it is recorded or moves on. */
export const CHARGE_EVENT: Record<Charge['status'], EventType> = {
  requires_action: 'charge.requires_action',
  processing: 'charge.processing',
  succeeded: 'charge.succeeded',
  failed: 'charge.failed',
  requires_capture: 'charge.authorized',
  capture_pending: 'charge.capture_pending',
  void_pending: 'charge.void_pending',
  voided: 'charge.voided',
  expired: 'charge.expired',
}

/** When an authorization made now expires, AUTHORIZATION_EXPIRES_DAYS from now (card networks allow about 7). */
export function authorizationExpiry(input: CreateChargeBody, days: number, from = Date.now()): Date | undefined {
  return input.capture === false ? new Date(from + days * 86_400_000) : undefined
}
