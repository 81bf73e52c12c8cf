// Stripe's events (docs.stripe.com/api/events): every change to an object is an Event holding a snapshot of the
// object as it then was, listed newest first for 30 days (GET /v1/events, a list: it reads what was written) and
// sent to the webhook endpoint (webhooks.ts). The objects events carry but this server does not otherwise hold
// (the Charge of a charge.refunded, a Dispute) are built here, typed with the SDK's own types.
import type Stripe from 'stripe'
import { collectedFee } from './application-fees.js'
import { invalidRequest, noSuch } from './errors.js'
import { arrayParam, type Form, stringParam } from './form.js'
import { stripeId, unixNow } from './ids.js'
import type { StripeLedger } from './ledger.js'
import { listOf, type Answer } from './lists.js'

/** The API version events are rendered in: the SDK's own, so its types describe them. */
export const API_VERSION = '2026-11-18.endive'

export class StripeEvents {
  readonly all: Stripe.Event[] = []
  private readonly listeners: ((event: Stripe.Event) => void)[] = []

  /** `account`: the connected account the events happen on, named in each (docs.stripe.com/connect/webhooks). */
  constructor(private readonly account?: string) {}

  /** A new event of `type`, holding a copy of `object` as it is now; sent to whoever listens (the webhook sender). */
  emit(type: string, object: { id: string }, idempotencyKey?: string): Stripe.Event {
    const event = {
      id: stripeId('evt'),
      object: 'event',
      ...(this.account && { account: this.account }),
      api_version: API_VERSION,
      created: unixNow(),
      data: { object: structuredClone(object) },
      livemode: false,
      pending_webhooks: 1,
      request: { id: idempotencyKey ? stripeId('req') : null, idempotency_key: idempotencyKey ?? null },
      type,
    } as unknown as Stripe.Event
    this.all.push(event)
    for (const listener of this.listeners) listener(event)
    return event
  }

  onEmit(listener: (event: Stripe.Event) => void): void {
    this.listeners.push(listener)
  }
}

/** GET /v1/events: newest first, `created` ranges, `type` or `types[]` (docs.stripe.com/api/events/list). */
export function listEvents(events: StripeEvents, form: Form): Answer<Stripe.ApiList<Stripe.Event>> {
  const type = stringParam(form, 'type')
  const types = arrayParam(form, 'types')
  if (type !== undefined && types !== undefined)
    throw invalidRequest('You may only specify one of these parameters: type, types.', 'types')
  const wanted = (event: Stripe.Event) =>
    (type === undefined || matches(type, event.type)) && (types === undefined || types.includes(event.type))
  return { status: 200, body: listOf(events.all.filter(wanted), form, '/v1/events') }
}

export function retrieveEvent(events: StripeEvents, id: string): Answer<Stripe.Event> {
  const event = events.all.find((each) => each.id === id)
  if (!event) throw noSuch('event', id, 'id')
  return { status: 200, body: event }
}

/** `type` takes a `*` wildcard: charge.dispute.* */
function matches(pattern: string, type: string): boolean {
  return pattern.endsWith('*') ? type.startsWith(pattern.slice(0, -1)) : pattern === type
}

/**
 * The Charge a PaymentIntent made (its latest_charge), as a charge.* event carries it, as it is now: what was refunded
 * of it, whether it is disputed, and its balance transaction's id once it captured money (null before).
 */
export function chargeOf(ledger: StripeLedger, intent: Stripe.PaymentIntent): Stripe.Charge {
  const refunded = ledger.refundedOf(intent.id)
  return {
    id: intent.latest_charge as string,
    object: 'charge',
    amount: intent.amount,
    amount_captured: intent.amount_received,
    amount_refunded: refunded,
    application: intent.application,
    application_fee: ledger.applicationFeeOf.get(intent.id) ?? null,
    application_fee_amount: intent.amount_received > 0 ? collectedFee(intent) || null : intent.application_fee_amount,
    balance_transaction: ledger.balance.ofPayment(intent)?.id ?? null,
    billing_details: { address: null, email: null, name: null, phone: null, tax_id: null },
    calculated_statement_descriptor: null,
    captured: intent.amount_received > 0,
    created: intent.created,
    currency: intent.currency,
    customer: null,
    description: intent.description,
    disputed: ledger.disputeOf(intent.id) !== undefined,
    failure_balance_transaction: null,
    failure_code: null,
    failure_message: null,
    fraud_details: null,
    livemode: false,
    // Stripe copies the PaymentIntent's metadata to the Charge it makes.
    metadata: intent.metadata,
    on_behalf_of: null,
    outcome: null,
    paid: true,
    payment_intent: intent.id,
    payment_method: intent.payment_method as string | null,
    payment_method_details: null,
    receipt_email: null,
    receipt_number: null,
    receipt_url: null,
    refunded: refunded === intent.amount_received,
    review: null,
    shipping: null,
    source: null,
    source_transfer: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: 'succeeded',
    transfer_data: null,
    transfer_group: null,
  }
}

/** A dispute of the PaymentIntent's charge, as docs.stripe.com/api/disputes describes one. */
export function disputeOf(
  intent: Stripe.PaymentIntent,
  status: Stripe.Dispute.Status,
  reason = 'fraudulent',
): Stripe.Dispute {
  return {
    id: stripeId('du'),
    object: 'dispute',
    amount: intent.amount_received,
    balance_transactions: [],
    charge: intent.latest_charge as string,
    created: unixNow(),
    currency: intent.currency,
    enhanced_eligibility_types: [],
    evidence: {
      access_activity_log: null,
      billing_address: null,
      cancellation_policy: null,
      cancellation_policy_disclosure: null,
      cancellation_rebuttal: null,
      customer_communication: null,
      customer_email_address: null,
      customer_name: null,
      customer_purchase_ip: null,
      customer_signature: null,
      duplicate_charge_documentation: null,
      duplicate_charge_explanation: null,
      duplicate_charge_id: null,
      enhanced_evidence: {},
      product_description: null,
      receipt: null,
      refund_policy: null,
      refund_policy_disclosure: null,
      refund_refusal_explanation: null,
      service_date: null,
      service_documentation: null,
      shipping_address: null,
      shipping_carrier: null,
      shipping_date: null,
      shipping_documentation: null,
      shipping_tracking_number: null,
      uncategorized_file: null,
      uncategorized_text: null,
      appeal: null,
    },
    evidence_details: {
      due_by: unixNow() + 7 * 86_400,
      enhanced_eligibility: {},
      has_evidence: false,
      past_due: false,
      submission_count: 0,
      submission_method: 'not_submitted',
    },
    intended_submission_method: null,
    is_charge_refundable: false,
    livemode: false,
    metadata: {},
    payment_intent: intent.id,
    reason,
    status,
  }
}
