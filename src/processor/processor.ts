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

export interface RefundOutcome {
  processorReference: string
}

/** Capture all or part of an authorization; the rest of it is released. */
export interface CaptureRequest {
  chargeReference: string
  amountCents: number
  idempotencyKey: string
}

export interface VoidRequest {
  chargeReference: string
  idempotencyKey: string
}

/** A capture or a void that the processor performed. */
export interface SettlementOutcome {
  processorReference: string
}

/** The outcome of each kind of operation. */
interface OutcomeOf {
  charge: ChargeOutcome
  authorization: ChargeOutcome
  capture: SettlementOutcome
  void: SettlementOutcome
  refund: RefundOutcome
}

/** What the processor did under one idempotency key, as its lookup reports it. */
export type OperationRecord = { [Kind in keyof OutcomeOf]: { kind: Kind; outcome: OutcomeOf[Kind] } }[keyof OutcomeOf]

export interface PaymentProcessor {
  /** Resolves with a decline as a normal outcome; throws ProcessorUnavailableError when the outcome is unknown. */
  charge(request: ChargeRequest): Promise<ChargeOutcome>
  /** Like charge, but only reserves the amount on the card, to capture later (or void). */
  authorize(request: ChargeRequest): Promise<ChargeOutcome>
  capture(request: CaptureRequest): Promise<SettlementOutcome>
  void(request: VoidRequest): Promise<SettlementOutcome>
  refund(request: RefundRequest): Promise<RefundOutcome>
  /**
   * What the processor did under `idempotencyKey` (the operation id it was sent), or undefined when it never
   * saw it. Real processors answer this (Stripe lists PaymentIntents by metadata; Adyen answers by reference).
   * Throws ProcessorUnavailableError when it cannot tell right now.
   */
  lookup(idempotencyKey: string): Promise<OperationRecord | undefined>
}

/**
 * What the processor did under `operationId`, if that was an operation of `kind`; undefined if it never saw it.
 * An operation of another kind under the id means the books and the processor disagree: that is thrown.
 */
export async function lookupOutcome<Kind extends keyof OutcomeOf>(
  processor: PaymentProcessor,
  operationId: string,
  kind: Kind,
): Promise<OutcomeOf[Kind] | undefined> {
  const found = await processor.lookup(operationId)
  if (found && found.kind !== kind) throw new Error(`operation ${operationId} is a ${found.kind} at the processor, not a ${kind}`)
  return found?.outcome as OutcomeOf[Kind] | undefined
}

/** The processor could not be reached or did not answer: its outcome is unknown, and the client should retry. */
export class ProcessorUnavailableError extends Error {
  override name = 'ProcessorUnavailableError'
}

/** The processor refused a key it had seen with other parameters (Stripe's idempotency_error): a defect here. */
export class ProcessorIdempotencyError extends Error {
  override name = 'ProcessorIdempotencyError'
}

/** For `.catch()` on a processor call: an outage becomes a 503 problem; anything else stays a 500. */
export function rethrowUnavailable(error: unknown): never {
  if (error instanceof ProcessorUnavailableError) {
    throw new Problem(
      'processor-unavailable',
      'The payment processor did not answer, so the outcome is not known yet. Retry with the same Idempotency-Key and body; if you do not, the service settles it within minutes.',
      {
        headers: { 'retry-after': '5' },
      },
    )
  }
  throw error
}
