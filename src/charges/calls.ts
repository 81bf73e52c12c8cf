// What the service sends the processor for a charge, a capture and a void, built in one place from what the
// request asked and what was reserved for it: the route sends it, and the recovery worker asks the processor about
// exactly the same request.
import type { CaptureRequest, ChargeRequest, VoidRequest } from '../processor/processor.js'
import type { CreateChargeBody } from '../schemas/charge.js'

export function chargeCall(accountId: string, input: CreateChargeBody, idempotencyKey: string): ChargeRequest {
  return { amountCents: input.amount_cents, currency: input.currency, source: input.source, description: input.description ?? null, accountId, idempotencyKey }
}

type ChargeOf = { account_id: string; processor_reference: string | null }

/** A capture of `amountCents` (what was reserved) of the authorization; the rest of it is released. */
export function captureCall(charge: ChargeOf, amountCents: number, idempotencyKey: string): CaptureRequest {
  return { chargeReference: charge.processor_reference!, amountCents, accountId: charge.account_id, idempotencyKey }
}

export function voidCall(charge: ChargeOf, idempotencyKey: string): VoidRequest {
  return { chargeReference: charge.processor_reference!, accountId: charge.account_id, idempotencyKey }
}
