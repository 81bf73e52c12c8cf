// Refunds as docs.stripe.com/api/refunds describes them: of a PaymentIntent's received amount, in part or in full,
// never more than is left; listed by PaymentIntent; each with metadata and its balance transaction (expandable); on a
// connected account, `refund_application_fee` gives back the platform's fee with it (application-fees.ts).
import type Stripe from 'stripe'
import { invalidRequest, noSuch } from './errors.js'
import { refundApplicationFee } from './application-fees.js'
import { arrayParam, booleanParam, type Form, integerParam, stringMap, stringParam } from './form.js'
import type { StripeLedger } from './ledger.js'
import { stripeId, unixNow } from './ids.js'
import { listOf, type Answer } from './lists.js'
import { chargeOf } from './events.js'
import type { Caller } from './payment-intents.js'

export function createRefund(ledger: StripeLedger, form: Form, caller: Caller): Answer<Stripe.Refund> {
  const intentId = stringParam(form, 'payment_intent')
  if (intentId === undefined)
    throw invalidRequest(
      'One of the following params should be provided for this request: payment_intent or charge.',
      'payment_intent',
      'parameter_missing',
    )
  const intent = ledger.paymentIntent(intentId)
  if (!intent) throw noSuch('payment_intent', intentId, 'payment_intent')
  if (intent.status !== 'succeeded') {
    throw invalidRequest(
      `This PaymentIntent (${intent.id}) does not have a successful charge to refund.`,
      'payment_intent',
      'charge_not_refundable',
    )
  }
  const left = intent.amount_received - ledger.refundedOf(intent.id)
  if (left === 0)
    throw invalidRequest(
      `Charge ${String(intent.latest_charge)} has already been refunded.`,
      undefined,
      'charge_already_refunded',
    )
  const amount = integerParam(form, 'amount') ?? left
  if (amount < 1 || amount > left) {
    throw invalidRequest(
      `Refund amount (${amount}) is greater than unrefunded amount on charge (${left})`,
      'amount',
      'amount_too_large',
    )
  }
  const refund: Stripe.Refund = {
    id: stripeId('re'),
    object: 'refund',
    amount,
    application: null,
    balance_transaction: stripeId('txn'),
    charge: intent.latest_charge as string,
    created: unixNow(),
    currency: intent.currency,
    customer: null,
    customer_account: null,
    metadata: stringMap(form, 'metadata') ?? {},
    payment_intent: intent.id,
    payment_method: intent.payment_method as string,
    reason: (stringParam(form, 'reason') ?? null) as Stripe.Refund.Reason | null,
    receipt_number: null,
    source_transfer_reversal: null,
    status: 'succeeded',
    transfer_reversal: null,
  }
  ledger.refunds.set(refund.id, refund)
  if (booleanParam(form, 'refund_application_fee') === true) refundApplicationFee(ledger, intent, refund)
  refund.balance_transaction = ledger.balance.ofRefund(refund).id
  ledger.move({ kind: 'refund', object: refund.id, amount, idempotencyKey: caller.idempotencyKey })
  told(ledger, refund, 'refund.created', caller.idempotencyKey)
  // docs.stripe.com/testing#refunds: this card's refunds succeed, then fail.
  if (intent.payment_method === 'pm_card_refundFail') ledger.afterwards(() => failRefund(ledger, refund.id))
  return { status: 200, body: answeredRefund(ledger, refund, form) }
}

/** The Refund as answered: its balance transaction expanded when the request asks (`expand[]=balance_transaction`). */
function answeredRefund(ledger: StripeLedger, refund: Stripe.Refund, form: Form): Stripe.Refund {
  if (!(arrayParam(form, 'expand') ?? []).includes('balance_transaction')) return refund
  return { ...refund, balance_transaction: ledger.balance.ofRefund(refund) }
}

/**
 * A refund made in the Dashboard: no metadata of the service's, and its own events; on a connected account, the
 * platform's fee given back with it if `refundApplicationFee`.
 */
export function refundFromDashboard(
  ledger: StripeLedger,
  intentId: string,
  amount?: number,
  refundApplicationFee = false,
): Stripe.Refund {
  const form: Form = {
    payment_intent: intentId,
    ...(amount === undefined ? {} : { amount: String(amount) }),
    ...(refundApplicationFee ? { refund_application_fee: 'true' } : {}),
  }
  return createRefund(ledger, form, { idempotencyKey: undefined, baseUrl: '' }).body
}

/** A refund that succeeded fails later (the card was closed): refund.failed, and its charge's refunds change. */
export function failRefund(ledger: StripeLedger, id: string): Stripe.Refund {
  const refund = retrieveRefund(ledger, id).body
  if (refund.status !== 'succeeded' && refund.status !== 'pending')
    throw invalidRequest(`Refund ${id} is ${refund.status}.`)
  refund.status = 'failed'
  refund.failure_reason = 'expired_or_canceled_card'
  refund.failure_balance_transaction = stripeId('txn')
  ledger.events.emit('refund.updated', refund)
  ledger.events.emit('refund.failed', refund)
  return refund
}

/** A refund's events: its own, and its charge's (charge.refunded), as Stripe sends both. */
function told(ledger: StripeLedger, refund: Stripe.Refund, type: string, idempotencyKey?: string): void {
  ledger.events.emit(type, refund, idempotencyKey)
  const intent = ledger.paymentIntent(refund.payment_intent as string)!
  ledger.events.emit('charge.refunded', chargeOf(ledger, intent), idempotencyKey)
}

export function retrieveRefund(ledger: StripeLedger, id: string, form: Form = {}): Answer<Stripe.Refund> {
  const refund = ledger.refunds.get(id)
  if (!refund) throw noSuch('refund', id, 'refund')
  return { status: 200, body: answeredRefund(ledger, refund, form) }
}

/** `payment_intent` or `charge` narrow the list to one payment's refunds. */
export function listRefunds(ledger: StripeLedger, form: Form): Answer<Stripe.ApiList<Stripe.Refund>> {
  const intent = stringParam(form, 'payment_intent')
  const charge = stringParam(form, 'charge')
  const refunds = [...ledger.refunds.values()].filter(
    (refund) =>
      (intent === undefined || refund.payment_intent === intent) && (charge === undefined || refund.charge === charge),
  )
  return { status: 200, body: listOf(refunds, form, '/v1/refunds') }
}
