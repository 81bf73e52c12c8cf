// What the Stripe test server holds: its PaymentIntents, Refunds, Disputes and Payouts (typed with the SDK's own
// types, so that a shape the SDK no longer has fails tsc), and every money movement with the idempotency key that
// caused it, for tests that count them. Lists are newest first, as Stripe's are.
import type Stripe from 'stripe'
import { STANDARD_CARD_PRICING, StripeBalance } from './balance.js'
import { StripeEvents } from './events.js'

export type MovementKind = 'charge' | 'authorization' | 'capture' | 'void' | 'refund' | 'payout'

/** One movement of money (or of a hold on it) at the processor. */
export interface Movement {
  kind: MovementKind
  /** The PaymentIntent or Refund that moved. */
  object: string
  amount: number
  idempotencyKey: string | undefined
}

export class StripeLedger {
  readonly paymentIntents = new Map<string, Stripe.PaymentIntent>()
  readonly refunds = new Map<string, Stripe.Refund>()
  readonly disputes = new Map<string, Stripe.Dispute>()
  readonly payouts = new Map<string, Stripe.Payout>()
  /** The platform's: the application fees it collected from its connected accounts (application-fees.ts). */
  readonly applicationFees = new Map<string, Stripe.ApplicationFee>()
  /** A connected account's: the ApplicationFee each of its PaymentIntents paid, and what each refund gave back. */
  readonly applicationFeeOf = new Map<string, string>()
  readonly feeRefundedBy = new Map<string, number>()
  readonly movements: Movement[] = []
  /** Every change, as an Event (listed, and sent to the webhook endpoint; a connected account's, to Connect's). */
  readonly events: StripeEvents
  /** Its balance transactions and automatic payouts. */
  readonly balance: StripeBalance
  /**
   * What Stripe does shortly after answering (a dispute of pm_card_createDispute, a refund of pm_card_refundFail
   * failing).
   */
  private readonly next: (() => void)[] = []
  /** When each object becomes visible to search (docs.stripe.com/search: the index lags). */
  readonly searchableAt = new Map<string, number>()

  constructor(
    private readonly searchLagMs: number,
    cardPricing = STANDARD_CARD_PRICING,
    /** The connected account whose objects these are (connect.ts); unset: the platform's own. */
    readonly account?: string,
    /** A connected account's platform, which collects its application fees. */
    readonly platform?: StripeLedger,
  ) {
    this.events = new StripeEvents(account)
    this.balance = new StripeBalance(this, cardPricing)
  }

  addPaymentIntent(intent: Stripe.PaymentIntent): void {
    this.paymentIntents.set(intent.id, intent)
    this.searchableAt.set(intent.id, Date.now() + this.searchLagMs)
  }

  paymentIntent(id: string): Stripe.PaymentIntent | undefined {
    return this.paymentIntents.get(id)
  }

  /** Does `work` once the current request is answered (runAfterwards). */
  afterwards(work: () => void): void {
    this.next.push(work)
  }

  runAfterwards(): void {
    for (const work of this.next.splice(0)) {
      try {
        work()
      } catch {
        // What no longer applies (the payment changed meanwhile) does not happen, as at Stripe.
      }
    }
  }

  move(movement: Movement): void {
    this.movements.push(movement)
  }

  /** The dispute of a PaymentIntent's charge, if any (a charge has at most one). */
  disputeOf(intentId: string): Stripe.Dispute | undefined {
    return [...this.disputes.values()].find((dispute) => dispute.payment_intent === intentId)
  }

  /** Refunds of one PaymentIntent that did not fail: what can no longer be refunded again. */
  refundedOf(intentId: string): number {
    return [...this.refunds.values()]
      .filter(
        (refund) => refund.payment_intent === intentId && refund.status !== 'failed' && refund.status !== 'canceled',
      )
      .reduce((sum, refund) => sum + refund.amount, 0)
  }
}
