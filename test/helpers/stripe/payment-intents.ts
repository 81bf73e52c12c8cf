// PaymentIntents as docs.stripe.com/api/payment_intents describes them: create (and confirm in the same call),
// retrieve, list, search (from an index that lags), capture (all or part, the rest released) and cancel. The
// state machine: requires_payment_method -> requires_confirmation -> (requires_action) -> requires_capture or
// succeeded; a decline goes back to requires_payment_method with last_payment_error; canceled from any state
// but succeeded.
import { randomBytes } from 'node:crypto'
import type Stripe from 'stripe'
import { invalidRequest, noSuch, StripeFailure, unexpectedState } from './errors.js'
import { arrayParam, booleanParam, type Form, hashParam, integerParam, stringMap, stringParam } from './form.js'
import { type StripeLedger, stripeId, unixNow } from './ledger.js'
import { listOf, type Answer } from './lists.js'
import { MAXIMUM_AMOUNT, MINIMUM_AMOUNTS, TEST_PAYMENT_METHODS, ZERO_DECIMAL_CURRENCIES } from './payment-methods.js'

export interface Caller {
  idempotencyKey: string | undefined
  /** This server's base URL, for the redirect of an authentication. */
  baseUrl: string
}

export function createPaymentIntent(ledger: StripeLedger, form: Form, caller: Caller): Answer<Stripe.PaymentIntent> {
  const amount = integerParam(form, 'amount')
  const currency = stringParam(form, 'currency')?.toLowerCase()
  if (amount === undefined) throw invalidRequest('Missing required param: amount.', 'amount', 'parameter_missing')
  if (currency === undefined) throw invalidRequest('Missing required param: currency.', 'currency', 'parameter_missing')
  checkAmount(amount, currency)
  const captureMethod = stringParam(form, 'capture_method') ?? 'automatic'
  if (!['automatic', 'automatic_async', 'manual'].includes(captureMethod)) throw invalidRequest(`Invalid capture_method: ${captureMethod}`, 'capture_method')
  const paymentMethod = stringParam(form, 'payment_method')
  if (paymentMethod !== undefined && !(paymentMethod in TEST_PAYMENT_METHODS)) throw noSuch('PaymentMethod', paymentMethod, 'payment_method')
  const paymentMethodTypes = arrayParam(form, 'payment_method_types')
  // Since API version 2023-08-16, automatic payment methods are on unless payment_method_types is given.
  const automatic = hashParam(form, 'automatic_payment_methods')
  const automaticEnabled = paymentMethodTypes === undefined && (automatic === undefined || booleanParam(automatic, 'enabled') !== false)
  const allowRedirects = automaticEnabled ? (stringParam(automatic ?? {}, 'allow_redirects') ?? 'always') : undefined
  const id = stripeId('pi')
  const intent: Stripe.PaymentIntent = {
    id,
    object: 'payment_intent',
    allowed_payment_method_types: null,
    amount,
    amount_capturable: 0,
    amount_received: 0,
    application: null,
    application_fee_amount: null,
    automatic_payment_methods: automaticEnabled ? { enabled: true, allow_redirects: allowRedirects as 'always' | 'never' } : null,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: captureMethod as Stripe.PaymentIntent.CaptureMethod,
    client_secret: `${id}_secret_${randomBytes(12).toString('hex')}`,
    confirmation_method: 'automatic',
    created: unixNow(),
    currency,
    customer: null,
    customer_account: null,
    description: stringParam(form, 'description') ?? null,
    excluded_payment_method_types: null,
    last_payment_error: null,
    latest_charge: null,
    livemode: false,
    managed_payments: null,
    metadata: stringMap(form, 'metadata') ?? {},
    next_action: null,
    on_behalf_of: null,
    payment_method: paymentMethod ?? null,
    payment_method_configuration_details: null,
    payment_method_options: null,
    payment_method_types: paymentMethodTypes ?? ['card'],
    payment_record: null,
    processing: null,
    receipt_email: null,
    review: null,
    setup_future_usage: null,
    shipping: null,
    source: null,
    statement_descriptor: null,
    statement_descriptor_suffix: null,
    status: paymentMethod ? 'requires_confirmation' : 'requires_payment_method',
    transfer_group: null,
  }
  const confirm = booleanParam(form, 'confirm') ?? false
  const returnUrl = stringParam(form, 'return_url')
  // docs.stripe.com/payments/accept-a-payment: confirming with redirect-capable methods needs somewhere to return.
  if (confirm && allowRedirects === 'always' && returnUrl === undefined) {
    throw invalidRequest(
      'This PaymentIntent is configured to accept payment methods that might redirect your customer off of your page, so you must provide a `return_url`, or set `automatic_payment_methods[allow_redirects]` to `never`.',
      'return_url',
    )
  }
  ledger.addPaymentIntent(intent)
  if (confirm) confirmIntent(ledger, intent, returnUrl, caller)
  return { status: 200, body: intent }
}

/** Confirms with the intent's payment method: it succeeds (or is authorized), is declined, or needs authentication. */
function confirmIntent(ledger: StripeLedger, intent: Stripe.PaymentIntent, returnUrl: string | undefined, caller: Caller): void {
  if (!intent.payment_method) throw invalidRequest("You cannot confirm this PaymentIntent because it's missing a payment method.", 'payment_method')
  const behaviour = TEST_PAYMENT_METHODS[intent.payment_method as string]!
  if (behaviour.kind === 'requires_authentication') {
    intent.status = 'requires_action'
    intent.next_action = returnUrl
      ? { type: 'redirect_to_url', redirect_to_url: { url: `${caller.baseUrl}/test/authenticate/${intent.id}`, return_url: returnUrl } }
      : { type: 'use_stripe_sdk', use_stripe_sdk: {} as Stripe.PaymentIntent.NextAction.UseStripeSdk }
    return
  }
  const charge = stripeId('ch')
  intent.latest_charge = charge
  if (behaviour.kind === 'declines') {
    const error = { type: 'card_error' as const, code: behaviour.code as Stripe.PaymentIntent.LastPaymentError.Code, decline_code: behaviour.declineCode, message: behaviour.message, charge }
    intent.status = 'requires_payment_method'
    intent.last_payment_error = error
    throw new StripeFailure(402, { ...error, payment_intent: intent })
  }
  succeed(ledger, intent, caller)
}

function succeed(ledger: StripeLedger, intent: Stripe.PaymentIntent, caller: Caller): void {
  if (intent.capture_method === 'manual') {
    intent.status = 'requires_capture'
    intent.amount_capturable = intent.amount
    ledger.move({ kind: 'authorization', object: intent.id, amount: intent.amount, idempotencyKey: caller.idempotencyKey })
  } else {
    intent.status = 'succeeded'
    intent.amount_received = intent.amount
    ledger.move({ kind: 'charge', object: intent.id, amount: intent.amount, idempotencyKey: caller.idempotencyKey })
  }
}

export function retrievePaymentIntent(ledger: StripeLedger, id: string): Answer<Stripe.PaymentIntent> {
  const intent = ledger.paymentIntent(id)
  if (!intent) throw noSuch('payment_intent', id, 'intent')
  return { status: 200, body: intent }
}

export function listPaymentIntents(ledger: StripeLedger, form: Form): Answer<Stripe.ApiList<Stripe.PaymentIntent>> {
  return { status: 200, body: listOf([...ledger.paymentIntents.values()], form, '/v1/payment_intents') }
}

/**
 * docs.stripe.com/search: eventually consistent; an object appears in results only some time after it was
 * written. Understands the query this server is asked: `metadata['key']:'value'` (and `status:'value'`).
 */
export function searchPaymentIntents(ledger: StripeLedger, form: Form): Answer<Stripe.ApiSearchResult<Stripe.PaymentIntent>> {
  const query = stringParam(form, 'query')
  if (!query) throw invalidRequest('Missing required param: query.', 'query', 'parameter_missing')
  const clauses = [...query.matchAll(/(metadata\['([^']+)'\]|status):'([^']*)'/g)].map((match) => ({ metadataKey: match[2], value: match[3]! }))
  const now = Date.now()
  const data = [...ledger.paymentIntents.values()]
    .reverse()
    .filter((intent) => (ledger.searchableAt.get(intent.id) ?? 0) <= now)
    .filter((intent) => clauses.every((clause) => (clause.metadataKey ? intent.metadata[clause.metadataKey] === clause.value : intent.status === clause.value)))
  return { status: 200, body: { object: 'search_result', data, has_more: false, next_page: null, url: '/v1/payment_intents/search' } }
}

export function capturePaymentIntent(ledger: StripeLedger, id: string, form: Form, caller: Caller): Answer<Stripe.PaymentIntent> {
  const intent = retrievePaymentIntent(ledger, id).body
  if (intent.status !== 'requires_capture') throw unexpectedState(intent, 'capture')
  const amount = integerParam(form, 'amount_to_capture') ?? intent.amount_capturable
  if (amount < 1 || amount > intent.amount_capturable) {
    throw invalidRequest(`The amount_to_capture (${amount}) must be at least 1 and no more than the amount_capturable (${intent.amount_capturable}).`, 'amount_to_capture', 'amount_too_large')
  }
  intent.status = 'succeeded'
  intent.amount_received = amount
  intent.amount_capturable = 0
  intent.metadata = mergedMetadata(intent.metadata, stringMap(form, 'metadata'))
  ledger.move({ kind: 'capture', object: intent.id, amount, idempotencyKey: caller.idempotencyKey })
  return { status: 200, body: intent }
}

const CANCELABLE = new Set(['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action', 'processing'])

export function cancelPaymentIntent(ledger: StripeLedger, id: string, form: Form, caller: Caller): Answer<Stripe.PaymentIntent> {
  const intent = retrievePaymentIntent(ledger, id).body
  if (!CANCELABLE.has(intent.status)) throw unexpectedState(intent, 'cancel')
  if (intent.status === 'requires_capture') ledger.move({ kind: 'void', object: intent.id, amount: intent.amount_capturable, idempotencyKey: caller.idempotencyKey })
  intent.status = 'canceled'
  intent.canceled_at = unixNow()
  intent.cancellation_reason = (stringParam(form, 'cancellation_reason') ?? null) as Stripe.PaymentIntent.CancellationReason | null
  intent.amount_capturable = 0
  return { status: 200, body: intent }
}

/** docs.stripe.com/metadata: keys given are set, a key given an empty value is removed, the others kept. */
function mergedMetadata(current: Stripe.Metadata, update: Record<string, string> | undefined): Stripe.Metadata {
  const merged = { ...current, ...update }
  for (const [key, value] of Object.entries(update ?? {})) if (value === '') delete merged[key]
  return merged
}

function checkAmount(amount: number, currency: string): void {
  const minimum = MINIMUM_AMOUNTS[currency]
  if (minimum === undefined) throw invalidRequest(`Invalid currency: ${currency}. Stripe currently supports these currencies: ${Object.keys(MINIMUM_AMOUNTS).join(', ')}`, 'currency')
  const shown = (value: number) => (ZERO_DECIMAL_CURRENCIES.has(currency) ? `${value}` : (value / 100).toFixed(2))
  if (amount < minimum) throw invalidRequest(`Amount must be at least ${shown(minimum)} ${currency}`, 'amount', 'amount_too_small')
  if (amount > MAXIMUM_AMOUNT) throw invalidRequest(`Amount must be no more than ${shown(MAXIMUM_AMOUNT)} ${currency}`, 'amount', 'amount_too_large')
}
