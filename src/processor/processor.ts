// The boundary to whoever really moves the money. Forks plug a real processor in behind this interface
// (docs/processors.md: how to write the next one); the rest of the service sees only these types and errors.
import { Problem } from '../problems.js'
import type { REFUSED_FIELDS } from '../schemas/problem-types.js'
import type { CapturedFunds, FeePart, LaterOutcomes } from './later-outcomes.js'

export type { CapturedFunds }

/** What every money-moving call carries: who it is for, and the operation id the processor dedupes by. */
interface Keyed {
  accountId: string
  /**
   * The account at the processor the call is made on: a connected account (Stripe Connect's acct_…) for an account
   * the operator linked to one, null for the platform's own. A charge's later calls go where the charge was made
   * (charges.processor_account), whatever the link says by then. A processor without such accounts ignores it.
   */
  processorAccount: string | null
  /**
   * The operation id: stable for one logical operation, even when a crashed attempt is taken over. A real
   * implementation must forward it as the processor's own idempotency key, or a retry after a crash can charge twice.
   */
  idempotencyKey: string
}

export interface ChargeRequest extends Keyed {
  /**
   * The charge this payment will be recorded as (derived from the operation id: the same on every retry and
   * lookup). A processor keeps it with the payment, so that what it tells later (its events) finds the charge.
   */
  chargeId: string
  amountCents: number
  currency: string
  source: string
  description?: string | null
  /** Where the customer's browser returns after authenticating (3-D Secure), if the client gave one. */
  returnUrl?: string | null
  /** The customer's online acceptance of a debit mandate, which bank debits need. */
  mandate?: { ipAddress: string; userAgent: string } | null
  /** The platform's fee on a payment made on a connected account (Stripe's application_fee_amount), if any. */
  applicationFeeCents?: number
}

/** What the customer must do before the processor decides: authenticate, at its page or through its SDK. */
export type NextAction =
  | { type: 'redirect_to_url'; url: string; returnUrl: string | null }
  /** Stripe's: the client finishes with Stripe.js (handleNextAction) and this client secret. */
  | { type: 'use_stripe_sdk'; clientSecret: string }

export type ChargeOutcome =
  /** `funds`: when money was captured (a charge, not an authorization) and the processor said what it kept. */
  | { status: 'succeeded'; processorReference: string; funds?: CapturedFunds }
  /** A decline; the processor's reference when it kept a record of the attempt (Stripe's PaymentIntent). */
  | { status: 'failed'; failureCode: string; failureMessage: string; processorReference?: string }
  /** Not decided yet: the customer must authenticate first; the processor's events tell the outcome. */
  | { status: 'requires_action'; processorReference: string; nextAction: NextAction }
  /** Not decided yet: the payment method settles later (a bank debit); the processor's events tell the outcome. */
  | { status: 'processing'; processorReference: string }

export interface RefundRequest extends Keyed {
  chargeReference: string
  amountCents: number
  /** Give back the platform's fee on the payment with it, in proportion (Stripe's refund_application_fee). */
  refundApplicationFee?: boolean
}

export interface RefundOutcome {
  processorReference: string
  /** What the refund gave back of the payment's fees, as negative parts, when the processor said (the platform's). */
  given?: FeePart[]
  /**
   * Received, not decided (Adyen's refunds answer `received`): the processor's news decides it (RefundState
   * succeeded or failed), and until then the refund is pending, its amount reserved on the charge.
   */
  decidedLater?: true
}

/** Capture all or part of an authorization; the rest of it is released. */
export interface CaptureRequest extends Keyed {
  chargeReference: string
  amountCents: number
  /** The platform's fee on what is captured, on a connected account (Stripe's application_fee_amount), if any. */
  applicationFeeCents?: number
}

export interface VoidRequest extends Keyed {
  chargeReference: string
}

/** A capture or a void that the processor performed, or received to decide later. */
export interface SettlementOutcome {
  processorReference: string
  /** A capture's: what the processor kept of it, when it said. */
  funds?: CapturedFunds
  /**
   * Received, not decided (Adyen's modifications answer `received`): the processor's later news decides it
   * (PaymentState: captured or canceled, or `refused`), and until then the charge says capture_pending or
   * void_pending. `funds` come with the decision.
   */
  decidedLater?: true
}

/**
 * Every kind of operation the processor performs, with what it is sent and what it answers: declared once here, and
 * lookups, recoveries and records follow. A fork's operation (a payout) adds its line, and its method below.
 */
interface Operations {
  charge: { request: ChargeRequest; outcome: ChargeOutcome }
  authorization: { request: ChargeRequest; outcome: ChargeOutcome }
  capture: { request: CaptureRequest; outcome: SettlementOutcome }
  void: { request: VoidRequest; outcome: SettlementOutcome }
  refund: { request: RefundRequest; outcome: RefundOutcome }
}

export type OperationKind = keyof Operations
type OutcomeOf = { [Kind in OperationKind]: Operations[Kind]['outcome'] }

/** What the processor did under one idempotency key, as its lookup reports it. */
export type OperationRecord = { [Kind in OperationKind]: { kind: Kind; outcome: OutcomeOf[Kind] } }[OperationKind]

/**
 * Which operation a lookup asks about: the very request that was sent under the idempotency key (the claim keeps
 * it), so that a processor can find it by strongly consistent means, and when it could first have gone out.
 */
export type LookupRequest = {
  [Kind in OperationKind]: { kind: Kind; request: Operations[Kind]['request']; notBefore: Date }
}[OperationKind]

export interface PaymentProcessor {
  /** How long the processor keeps the idempotency keys it is sent; unset: for ever (src/idempotency/operation.ts). */
  readonly keyRetentionSeconds?: number
  /** What it tells after its answers: its webhooks and its list of events, and its payments as they are now. */
  readonly later: LaterOutcomes
  /** Resolves with a decline as a normal outcome; throws ProcessorUnavailableError when the outcome is unknown. */
  charge(request: ChargeRequest): Promise<ChargeOutcome>
  /** Like charge, but only reserves the amount on the card, to capture later (or void). */
  authorize(request: ChargeRequest): Promise<ChargeOutcome>
  capture(request: CaptureRequest): Promise<SettlementOutcome>
  void(request: VoidRequest): Promise<SettlementOutcome>
  refund(request: RefundRequest): Promise<RefundOutcome>
  /**
   * What the processor did with the request (under its idempotency key, the operation id), or undefined when it
   * never saw it. The recovery worker forgets an operation on undefined and the client's retry then makes a new one, so
   * undefined must be final: answer it only from reads that cannot lag (never a search index), and only for a
   * call that can no longer arrive (the recovery worker asks after RECOVERY_GRACE_SECONDS, longer than
   * PROCESSOR_TIMEOUT_MS, past which no call is sent). Throws ProcessorUnavailableError when it cannot tell now.
   */
  lookup(request: LookupRequest): Promise<OperationRecord | undefined>
}

/** Every method of the boundary, for what wraps a processor whole (instrumented.ts, the tests' doubles). */
export const PROCESSOR_METHODS = [
  'charge',
  'authorize',
  'capture',
  'void',
  'refund',
  'lookup',
] as const satisfies readonly (keyof PaymentProcessor)[]
// A method added to PaymentProcessor and not to PROCESSOR_METHODS fails here, naming it.
type Unlisted = Exclude<
  {
    [K in keyof PaymentProcessor]-?: PaymentProcessor[K] extends (...args: never[]) => unknown ? K : never
  }[keyof PaymentProcessor],
  (typeof PROCESSOR_METHODS)[number]
>
export const EVERY_METHOD_LISTED: [Unlisted] extends [never] ? true : `add ${Unlisted & string} to PROCESSOR_METHODS` =
  true

/**
 * What the processor did under the operation, if it was an operation of that kind; undefined if it never saw it.
 * An operation of another kind under the id means the books and the processor disagree: that is thrown.
 */
export async function lookupOutcome<Kind extends OperationKind>(
  processor: PaymentProcessor,
  lookup: LookupRequest & { kind: Kind },
): Promise<OutcomeOf[Kind] | undefined> {
  const found = await processor.lookup(lookup)
  if (found && found.kind !== lookup.kind)
    throw new Error(
      `operation ${lookup.request.idempotencyKey} is a ${found.kind} at the processor, not a ${lookup.kind}`,
    )
  return found?.outcome as OutcomeOf[Kind] | undefined
}

/** The processor could not be reached or did not answer: its outcome is unknown, and the client should retry. */
export class ProcessorUnavailableError extends Error {
  override name = 'ProcessorUnavailableError'
}

/**
 * The processor refused a key it had seen with other parameters (Stripe's idempotency_error): a defect here, since
 * every call under one operation id is built from the same request. What the first call did is still unknown.
 */
export class ProcessorIdempotencyError extends Error {
  override name = 'ProcessorIdempotencyError'
}

/**
 * The processor refused the request itself: nothing was performed, and the same request will be refused again.
 * With `field`, the request's field to change (an unknown or unusable payment method, an amount below the
 * processor's minimum); without, a refusal of the operation (the payment is in no state for it at the processor).
 */
export class ProcessorRequestError extends Error {
  override name = 'ProcessorRequestError'
  /** Read by operation.callOut (src/idempotency/operation.ts): a refusal leaves nothing downstream. */
  readonly operationNotPerformed = true

  constructor(
    readonly field: (typeof REFUSED_FIELDS)[number] | undefined,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

/**
 * For `.catch()` on a processor call: an unknown outcome becomes a 503 problem (settled later, by a retry or the
 * recovery worker), a refused request a 422 naming the field to change, if one; anything else stays an error.
 */
export function rethrowAsProblem(error: unknown): never {
  if (error instanceof ProcessorIdempotencyError) {
    throw new Problem(
      'processor-unavailable',
      'The payment processor refused this operation as one it saw with other parameters (a defect of this service, ' +
        'logged). What it did is being settled: retry later with the same Idempotency-Key and body.',
      { headers: { 'retry-after': '60' } },
    )
  }
  if (error instanceof ProcessorUnavailableError) {
    throw new Problem(
      'processor-unavailable',
      'The payment processor did not answer, so the outcome is not known yet. Retry with the same Idempotency-Key ' +
        'and body; if you do not, the service settles it within minutes.',
      { headers: { 'retry-after': '5' } },
    )
  }
  if (error instanceof ProcessorRequestError) {
    throw new Problem('processor-refused', `The payment processor refused the request: ${error.message}`, {
      extensions: { ...(error.field ? { param: error.field } : {}), processor_code: error.code },
    })
  }
  throw error
}
