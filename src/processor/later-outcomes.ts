// The second half of the processor boundary: what a processor tells after its answer. A payment that needed
// authentication or settles later, a refund that fails days after it succeeded, a refund or a capture made at the
// processor (its dashboard), a dispute: each reaches the service only as one of the processor's events, delivered
// at least once, in any order, or not at all (and then only its list of events still has it). A processor's
// events are translated here into changes the books understand; src/processor-events/ applies them.

/** Where a payment is at the processor. */
export type PaymentStatus = 'requires_action' | 'processing' | 'requires_capture' | 'succeeded' | 'failed' | 'canceled'
export type RefundStatus = 'pending' | 'succeeded' | 'failed' | 'canceled'
/** A dispute's course: open (needs_response, under_review), then closed (won, lost). */
export type DisputeStatus = 'needs_response' | 'under_review' | 'won' | 'lost'

/** A payment as the processor holds it now (in an event, or listed for the comparison of the books). */
export interface PaymentState {
  object: 'payment'
  reference: string
  /** The charge it was made for (ChargeRequest.chargeId); unset for a payment this service did not make. */
  chargeId?: string
  /** When the processor made it: the comparison leaves the newest alone, as they may still be in flight. */
  createdAt?: Date
  status: PaymentStatus
  amountCents: number
  /** What was captured, once succeeded (less than the amount after a partial capture). */
  amountCapturedCents: number
  failureCode?: string
  failureMessage?: string
  /** Why a canceled payment was: `expired` (its authorization lapsed at the processor) or `canceled`. */
  cancellation?: 'expired' | 'canceled'
  /** What the processor kept of it once succeeded, read before its event is accepted (LaterOutcomes.fundsOf). */
  funds?: CapturedFunds
  /**
   * A capture or void the processor received to decide later (SettlementOutcome.decidedLater) and then refused
   * (Adyen's CAPTURE or CANCELLATION with success false): the authorization stands, as `status` says.
   */
  refused?: { operation: 'capture' | 'void'; reason: string }
}

export interface RefundState {
  object: 'refund'
  reference: string
  paymentReference: string
  /** The charge of its payment, where the processor can tell. */
  chargeId?: string
  /** The operation id of a refund this service asked for; unset for one made at the processor (its dashboard). */
  operationId?: string
  createdAt?: Date
  status: RefundStatus
  amountCents: number
  failureReason?: string
  /**
   * What a refund made at the processor gave back of the platform's fee (Stripe Connect's application fee, refunded
   * with it from the Dashboard), as negative parts, read from its balance transaction. One this service asked for
   * is posted from the processor's answer instead.
   */
  given?: FeePart[]
}

/**
 * What the processor kept of money it captured, and when the rest is available to pay out: its balance transaction
 * (Stripe's, expanded in its answer), when the answer carries one in the payment's currency. Without it the books
 * post what the pricing says (src/processor/pricing.ts), and the payout report names any difference (fee_differs).
 */
export interface CapturedFunds {
  /** Its fee, in parts, in the payment's minor unit. */
  fees: FeePart[]
  /** When the rest is available to pay out: ISO 8601. */
  availableOn: string
}

/**
 * A part of a fee kept of a payment, in the payment's minor unit: by the processor, or by the platform (Stripe
 * Connect's application fee, which the processor takes for it); negative when given back.
 */
export interface FeePart {
  amountCents: number
  description: string
  keptBy?: 'platform'
}

export interface DisputeState {
  object: 'dispute'
  reference: string
  paymentReference: string
  chargeId?: string
  status: DisputeStatus
  /** What the customer disputes: the amount at risk. */
  amountCents: number
  reason: string
  /**
   * The money the processor withdrew for it, once it has (Stripe: the dispute's negative balance transaction, told by
   * charge.dispute.funds_withdrawn or a later event). Unset while nothing moved: an inquiry withdraws nothing.
   */
  withdrawal?: DisputeFunds
  /** The money it gave back when the dispute was won, once it has (Stripe: the positive balance transaction). */
  reinstatement?: DisputeFunds
}

/** Money a dispute moved at the processor. */
export interface DisputeFunds {
  /** How much, in the payment's minor unit: positive, whichever way it moved. */
  amountCents: number
  /**
   * The fee that moved with it (a withdrawal's dispute fee; a reinstatement's negative where the fee was given back).
   * Unset for a processor whose fees are the pricing's (the simulated one): the pricing's dispute fee, withdrawn and
   * never given back.
   */
  fees?: FeePart[]
}

/** Where a payout is: on its way to the bank, arrived, or failed (the bank refused it; the money goes back). */
export type PayoutStatus = 'in_transit' | 'paid' | 'failed'

/** One of the processor's balance transactions that a payout carries (Stripe: listed with ?payout=). */
export interface CarriedTransaction {
  /** The processor's own id of it (Stripe: txn_…). */
  reference: string
  /**
   * What moved: a payment captured, a refund, its failure, a dispute's withdrawal or reinstatement, the money of a
   * failed payout back in the balance (paid out again by a later payout); `other` for what the books never hold.
   */
  type: 'charge' | 'refund' | 'refund_failure' | 'dispute' | 'dispute_reversal' | 'payout_failure' | 'other'
  /** The payment it is about, and the charge it was made for where the processor can tell (unset: not ours). */
  paymentReference?: string
  chargeId?: string
  /** The refund, dispute or failed payout it is about (the processor's reference); unset for a payment's own. */
  objectReference?: string
  amountCents: number
  feeCents: number
  netCents: number
}

/**
 * A payout of the processor's balance to the bank, on its schedule. It belongs to the processor account as a whole:
 * each account's share is the net of what it carries of that account's money.
 */
export interface PayoutState {
  object: 'payout'
  reference: string
  status: PayoutStatus
  amountCents: number
  currency: string
  /** What it carries; unset while the processor has not told (Stripe: until its reconciliation completes). */
  carried?: CarriedTransaction[]
  /** When it is expected at the bank, or arrived (an ISO 8601 instant). */
  arrivalDate?: string
  failureCode?: string
}

export type ProcessorChange = PaymentState | RefundState | DisputeState | PayoutState

/** One of the processor's events, read: its own id (what deduplicates it), and what it changes in the books. */
export interface ProcessorEvent {
  id: string
  /** The processor's name for it (payment_intent.succeeded), kept for the operator reading the inbox. */
  type: string
  createdAt: Date
  /**
   * The processor account it is about (Stripe Connect's `account`: a connected account), unset for the platform's
   * own. It changes only charges made on that processor account (src/processor-events/apply.ts).
   */
  processorAccount?: string
  /** Empty when it changes nothing here: a type the service does not follow, or an object it did not make. */
  changes: ProcessorChange[]
}

/** What a processor holds now, for the comparison with the books (src/processor-events/compare.ts). */
export interface ProcessorStates {
  payments: PaymentState[]
  refunds: RefundState[]
}

/**
 * What the processor holds of the platform's fees on one processor account's payments in one currency (Stripe
 * Connect's application fees): what it collected and what it gave back, held against the platform's books
 * (src/ledger/platform-fees.ts).
 */
export interface PlatformFeesAt {
  processorAccount: string
  currency: string
  collectedCents: number
  refundedCents: number
}

export interface LaterOutcomes {
  /** The name in the path of its webhook endpoint: POST /webhooks/<name>. */
  readonly name: string
  /**
   * A delivery of the processor's webhook: verified over its raw bytes (its signature and timestamp) and read.
   * Throws WebhookRefusedError when it is not authentic; unset for a processor that sends no webhooks.
   */
  receive?(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): Promise<ProcessorEvent>
  /**
   * The events of a processor account (null: the platform's) created since `since`, from a list that cannot lag
   * (never a search index). A processor without processor accounts has none for any other than null.
   */
  eventsSince(since: Date, processorAccount: string | null): AsyncIterable<ProcessorEvent>
  /**
   * A processor account's payments and refunds as they are now: those created since `since`, and the payments
   * named (the books' payments that are not final yet, whatever their age).
   */
  statesSince(since: Date, payments: string[], processorAccount: string | null): Promise<ProcessorStates>
  /**
   * What the processor kept of a payment it captured on its own time (an authentication passed, a debit settled, a
   * capture made in its dashboard) and when the rest is available: its event names the payment, not its balance
   * transaction. Unset for a processor whose fees are the pricing's (the simulated one); undefined when it has not
   * said yet.
   */
  fundsOf?(payment: PaymentState, processorAccount: string | null): Promise<CapturedFunds | undefined>
  /**
   * Every fee the platform collected on its connected accounts' payments, summed by processor account and currency,
   * from a list that cannot lag. Unset for a processor without them.
   */
  platformFees?(): Promise<PlatformFeesAt[]>
}

/** A webhook delivery that is not the processor's: unsigned, signed with another secret, tampered, or stale. */
export class WebhookRefusedError extends Error {
  override name = 'WebhookRefusedError'
}
