// The boundary to whoever really moves the money. Forks plug a real processor in behind this interface.
import { Problem } from '../problems.js'

export interface ChargeRequest {
  amountCents: number
  currency: string
  source: string
  /**
   * Stable for one logical operation, even when a crashed attempt is taken over: a real implementation
   * must forward it as the processor's own idempotency key, or a retry after a crash can charge twice.
   */
  idempotencyKey: string
}

export type ChargeOutcome =
  | { status: 'succeeded'; processorReference: string }
  | { status: 'failed'; failureCode: string; failureMessage: string }

export interface RefundRequest {
  chargeReference: string
  amountCents: number
  idempotencyKey: string
}

export interface PaymentProcessor {
  /** Resolves with a decline as a normal outcome; throws ProcessorUnavailableError when the outcome is unknown. */
  charge(request: ChargeRequest): Promise<ChargeOutcome>
  refund(request: RefundRequest): Promise<{ processorReference: string }>
}

/** The processor could not be reached or did not answer: its outcome is unknown, and the client should retry. */
export class ProcessorUnavailableError extends Error {
  override name = 'ProcessorUnavailableError'
}

/** For `.catch()` on a processor call: an outage becomes a 503 problem; anything else stays a 500. */
export function rethrowUnavailable(error: unknown): never {
  if (error instanceof ProcessorUnavailableError) {
    throw new Problem('processor-unavailable', 'The payment processor did not answer; nothing was recorded. Retry with the same Idempotency-Key and body.', {
      headers: { 'retry-after': '5' },
    })
  }
  throw error
}
