// What the Stripe test server holds: its PaymentIntents and Refunds (typed with the SDK's own types, so that a
// shape the SDK no longer has fails tsc), and every money movement with the idempotency key that caused it, for
// tests that count them. Lists are newest first, as Stripe's are.
import { randomBytes } from 'node:crypto'
import type Stripe from 'stripe'

export type MovementKind = 'charge' | 'authorization' | 'capture' | 'void' | 'refund'

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
  readonly movements: Movement[] = []
  /** When each object becomes visible to search (docs.stripe.com/search: the index lags). */
  readonly searchableAt = new Map<string, number>()

  constructor(private readonly searchLagMs: number) {}

  addPaymentIntent(intent: Stripe.PaymentIntent): void {
    this.paymentIntents.set(intent.id, intent)
    this.searchableAt.set(intent.id, Date.now() + this.searchLagMs)
  }

  paymentIntent(id: string): Stripe.PaymentIntent | undefined {
    return this.paymentIntents.get(id)
  }

  move(movement: Movement): void {
    this.movements.push(movement)
  }

  /** Refunds of one PaymentIntent that did not fail: what can no longer be refunded again. */
  refundedOf(intentId: string): number {
    return [...this.refunds.values()]
      .filter((refund) => refund.payment_intent === intentId && refund.status !== 'failed' && refund.status !== 'canceled')
      .reduce((sum, refund) => sum + refund.amount, 0)
  }
}

/** Stripe-like ids: a prefix and 24 random characters. */
export function stripeId(prefix: string): string {
  return `${prefix}_${randomBytes(18).toString('base64url').replace(/[-_]/g, 'x').slice(0, 24)}`
}

export function unixNow(): number {
  return Math.floor(Date.now() / 1000)
}
