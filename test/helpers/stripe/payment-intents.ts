// PaymentIntents as docs.stripe.com/api/payment_intents describes them: create (and confirm in the same call),
// retrieve, list, search (from an index that lags), capture (all or part, the rest released) and cancel. The
// state machine: requires_payment_method -> requires_confirmation -> (requires_action) -> (processing) ->
// requires_capture or succeeded; a decline, or a failed authentication, goes back to requires_payment_method with
// last_payment_error; canceled from any state but succeeded. Every change is an event (events.ts).
import { randomBytes } from 'node:crypto'
import type Stripe from 'stripe'
import { applicationFeeParam, collectApplicationFee, PLATFORM_APPLICATION } from './application-fees.js'
import { invalidRequest, noSuch, StripeFailure, unexpectedState } from './errors.js'
import { arrayParam, booleanParam, type Form, hashParam, integerParam, stringMap, stringParam } from './form.js'
import type { StripeLedger } from './ledger.js'
import { stripeId, unixNow } from './ids.js'
import { listOf, type Answer } from './lists.js'
import { chargeOf, disputeOf } from './events.js'
import { MAXIMUM_AMOUNT, MINIMUM_AMOUNTS, testPaymentMethod, ZERO_DECIMAL_CURRENCIES } from './payment-methods.js'

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
  if (!['automatic', 'automatic_async', 'manual'].includes(captureMethod))
    throw invalidRequest(`Invalid capture_method: ${captureMethod}`, 'capture_method')
  const paymentMethod = stringParam(form, 'payment_method')
  if (paymentMethod !== undefined && !testPaymentMethod(paymentMethod))
    throw noSuch('PaymentMethod', paymentMethod, 'payment_method')
  const applicationFee = applicationFeeParam(ledger, form, amount)
  const paymentMethodTypes = arrayParam(form, 'payment_method_types')
  // Since API version 2023-08-16, automatic payment methods are on unless payment_method_types is given.
  const automatic = hashParam(form, 'automatic_payment_methods')
  const automaticEnabled =
    paymentMethodTypes === undefined && (automatic === undefined || booleanParam(automatic, 'enabled') !== false)
  const allowRedirects = automaticEnabled ? (stringParam(automatic ?? {}, 'allow_redirects') ?? 'always') : undefined
  const id = stripeId('pi')
  const intent: Stripe.PaymentIntent = {
    id,
    object: 'payment_intent',
    allowed_payment_method_types: null,
    amount,
    amount_capturable: 0,
    amount_received: 0,
    application: applicationFee === undefined ? null : PLATFORM_APPLICATION,
    application_fee_amount: applicationFee ?? null,
    automatic_payment_methods: automaticEnabled
      ? { enabled: true, allow_redirects: allowRedirects as 'always' | 'never' }
      : null,
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
      'This PaymentIntent is configured to accept payment methods that might redirect your customer off of your ' +
        'page, so you must provide a `return_url`, or set `automatic_payment_methods[allow_redirects]` to `never`.',
      'return_url',
    )
  }
  if (returnUrl !== undefined && !confirm)
    throw invalidRequest('return_url can only be used with confirm=true.', 'return_url')
  if (returnUrl !== undefined && !URL.canParse(returnUrl))
    throw invalidRequest('Not a valid URL', 'return_url', 'url_invalid')
  const mandate = hashParam(form, 'mandate_data')
  if (mandate !== undefined && !confirm)
    throw invalidRequest('mandate_data can only be used with confirm=true.', 'mandate_data')
  if (confirm && paymentMethod !== undefined && testPaymentMethod(paymentMethod)?.kind === 'bank_debit') {
    if (captureMethod === 'manual')
      throw invalidRequest(
        'The payment method type us_bank_account does not support capture_method manual.',
        'capture_method',
      )
    if (!acceptedMandate(mandate)) {
      throw invalidRequest(
        'A mandate is required to confirm this payment: provide mandate_data[customer_acceptance] (type online ' +
          'with ip_address and user_agent).',
        'mandate_data',
        'parameter_missing',
      )
    }
  }
  ledger.addPaymentIntent(intent)
  ledger.events.emit('payment_intent.created', intent, caller.idempotencyKey)
  if (confirm) confirmIntent(ledger, intent, returnUrl, caller)
  return { status: 200, body: answered(ledger, intent, form) }
}

/**
 * The PaymentIntent as answered: `latest_charge` expanded when the request asks (`expand[]=latest_charge`), and
 * within it the charge's balance transaction (`latest_charge.balance_transaction`), as docs.stripe.com/expand says.
 */
function answered(ledger: StripeLedger, intent: Stripe.PaymentIntent, form: Form): Stripe.PaymentIntent {
  const asked = arrayParam(form, 'expand') ?? []
  if (!intent.latest_charge || !asked.some((path) => path.split('.')[0] === 'latest_charge')) return intent
  const charge = chargeOf(ledger, intent)
  const txn = ledger.balance.ofPayment(intent) ?? null
  charge.balance_transaction = asked.includes('latest_charge.balance_transaction') ? txn : (txn?.id ?? null)
  return { ...intent, latest_charge: charge }
}

/** docs.stripe.com/api/payment_intents/confirm#confirm_payment_intent-mandate_data: online acceptance needs both. */
function acceptedMandate(mandate: Form | undefined): boolean {
  const acceptance = mandate && hashParam(mandate, 'customer_acceptance')
  const type = acceptance && stringParam(acceptance, 'type')
  if (type === 'offline') return true
  const online = acceptance && hashParam(acceptance, 'online')
  return (
    type === 'online' &&
    online !== undefined &&
    !!stringParam(online, 'ip_address') &&
    !!stringParam(online, 'user_agent')
  )
}

/**
 * Confirms with the intent's payment method: it succeeds (or is authorized), is declined, needs authentication, or
 * processes.
 */
function confirmIntent(
  ledger: StripeLedger,
  intent: Stripe.PaymentIntent,
  returnUrl: string | undefined,
  caller: Caller,
): void {
  if (!intent.payment_method)
    throw invalidRequest(
      "You cannot confirm this PaymentIntent because it's missing a payment method.",
      'payment_method',
    )
  const behaviour = testPaymentMethod(intent.payment_method as string)!
  if (behaviour.kind === 'requires_authentication') {
    intent.status = 'requires_action'
    intent.next_action = returnUrl
      ? {
          type: 'redirect_to_url',
          redirect_to_url: { url: `${caller.baseUrl}/test/authenticate/${intent.id}`, return_url: returnUrl },
        }
      : { type: 'use_stripe_sdk', use_stripe_sdk: {} as Stripe.PaymentIntent.NextAction.UseStripeSdk }
    ledger.events.emit('payment_intent.requires_action', intent, caller.idempotencyKey)
    return
  }
  intent.latest_charge = stripeId('ch')
  if (behaviour.kind === 'bank_debit') {
    intent.status = 'processing'
    ledger.events.emit('payment_intent.processing', intent, caller.idempotencyKey)
    return
  }
  if (behaviour.kind === 'declines') decline(ledger, intent, behaviour, caller.idempotencyKey)
  succeed(ledger, intent, caller.idempotencyKey)
}

/** A decline: back to requires_payment_method with the error, told, and answered 402 to the confirmation. */
function decline(
  ledger: StripeLedger,
  intent: Stripe.PaymentIntent,
  behaviour: { code: string; declineCode?: string; message: string },
  idempotencyKey?: string,
): never {
  const error = {
    type: 'card_error' as const,
    code: behaviour.code as Stripe.PaymentIntent.LastPaymentError.Code,
    message: behaviour.message,
    charge: intent.latest_charge as string,
    ...(behaviour.declineCode && { decline_code: behaviour.declineCode }),
  }
  intent.status = 'requires_payment_method'
  intent.next_action = null
  intent.last_payment_error = error
  ledger.events.emit('payment_intent.payment_failed', intent, idempotencyKey)
  throw new StripeFailure(402, { ...error, payment_intent: intent })
}

function succeed(ledger: StripeLedger, intent: Stripe.PaymentIntent, idempotencyKey?: string): void {
  intent.next_action = null
  if (intent.capture_method === 'manual') {
    intent.status = 'requires_capture'
    intent.amount_capturable = intent.amount
    ledger.move({ kind: 'authorization', object: intent.id, amount: intent.amount, idempotencyKey })
    ledger.events.emit('payment_intent.amount_capturable_updated', intent, idempotencyKey)
    return
  }
  intent.status = 'succeeded'
  intent.amount_received = intent.amount
  collectApplicationFee(ledger, intent)
  ledger.move({ kind: 'charge', object: intent.id, amount: intent.amount, idempotencyKey })
  ledger.events.emit('charge.succeeded', chargeOf(ledger, intent), idempotencyKey)
  ledger.events.emit('payment_intent.succeeded', intent, idempotencyKey)
  // docs.stripe.com/testing#disputes: this card's payments are disputed as soon as they succeed.
  if (intent.payment_method === 'pm_card_createDispute') ledger.afterwards(() => openDispute(ledger, intent))
  if (intent.payment_method === 'pm_card_createDisputeInquiry')
    ledger.afterwards(() => openDispute(ledger, intent, 'inquiry'))
}

/** The customer authenticates (or fails to), at the page next_action pointed to. */
export function completeAuthentication(ledger: StripeLedger, id: string, succeeded: boolean): Stripe.PaymentIntent {
  const intent = retrievePaymentIntent(ledger, id).body
  if (intent.status !== 'requires_action') throw unexpectedState(intent, 'authentication')
  const behaviour = testPaymentMethod(intent.payment_method as string)
  intent.latest_charge = stripeId('ch')
  try {
    if (!succeeded)
      decline(ledger, intent, {
        code: 'payment_intent_authentication_failure',
        message:
          'We are unable to authenticate your payment method. Please choose a different payment method and try again.',
      })
    if (behaviour?.kind === 'requires_authentication' && behaviour.thenDeclines)
      decline(ledger, intent, behaviour.thenDeclines)
  } catch (error) {
    if (error instanceof StripeFailure) return intent
    throw error
  }
  succeed(ledger, intent)
  return intent
}

/** A bank debit settles: processing becomes succeeded, or fails (docs.stripe.com/payments/ach-debit). */
export function settleBankDebit(ledger: StripeLedger, id: string): Stripe.PaymentIntent {
  const intent = retrievePaymentIntent(ledger, id).body
  const behaviour = testPaymentMethod(intent.payment_method as string)
  if (intent.status !== 'processing' || behaviour?.kind !== 'bank_debit' || behaviour.settles === 'stays')
    throw unexpectedState(intent, 'settlement')
  if (behaviour.settles !== 'succeeds') {
    try {
      decline(ledger, intent, behaviour.settles)
    } catch (error) {
      if (!(error instanceof StripeFailure)) throw error
    }
    return intent
  }
  succeed(ledger, intent)
  return intent
}

/**
 * The customer disputes the payment at their bank, as docs.stripe.com/disputes/how-disputes-work tells it:
 * charge.dispute.created, whose dispute has no balance transaction yet, then charge.dispute.funds_withdrawn, which
 * carries the withdrawal (its amount and the dispute fee). An inquiry (docs.stripe.com/disputes/how-disputes-work
 * #inquiries: `warning_needs_response`) withdraws nothing.
 */
export function openDispute(
  ledger: StripeLedger,
  intent: Stripe.PaymentIntent,
  kind: 'dispute' | 'inquiry' = 'dispute',
): Stripe.Dispute {
  if (intent.status !== 'succeeded' || ledger.disputeOf(intent.id)) throw unexpectedState(intent, 'dispute')
  const dispute = disputeOf(intent, kind === 'inquiry' ? 'warning_needs_response' : 'needs_response')
  ledger.disputes.set(dispute.id, dispute)
  ledger.events.emit('charge.dispute.created', dispute)
  if (kind === 'dispute') {
    dispute.balance_transactions = [ledger.balance.withdraw(dispute)]
    ledger.events.emit('charge.dispute.funds_withdrawn', dispute)
  }
  return dispute
}

/**
 * The dispute is decided: won, its amount reinstated (charge.dispute.funds_reinstated, the fee kept), then
 * charge.dispute.closed; lost, closed and nothing back. An inquiry closes as `warning_closed`, with nothing moved.
 */
export function closeDispute(ledger: StripeLedger, intentId: string, outcome: 'won' | 'lost'): Stripe.Dispute {
  const dispute = ledger.disputeOf(intentId)
  if (!dispute || ['won', 'lost', 'warning_closed'].includes(dispute.status))
    throw invalidRequest(`PaymentIntent ${intentId} has no open dispute.`)
  if (dispute.status.startsWith('warning_')) {
    dispute.status = 'warning_closed'
  } else {
    dispute.status = outcome
    if (outcome === 'won') {
      dispute.balance_transactions = [...dispute.balance_transactions, ledger.balance.reinstate(dispute)]
      ledger.events.emit('charge.dispute.funds_reinstated', dispute)
    }
  }
  ledger.events.emit('charge.dispute.closed', dispute)
  return dispute
}

export function retrievePaymentIntent(ledger: StripeLedger, id: string, form: Form = {}): Answer<Stripe.PaymentIntent> {
  const intent = ledger.paymentIntent(id)
  if (!intent) throw noSuch('payment_intent', id, 'intent')
  return { status: 200, body: answered(ledger, intent, form) }
}

export function listPaymentIntents(ledger: StripeLedger, form: Form): Answer<Stripe.ApiList<Stripe.PaymentIntent>> {
  const page = listOf([...ledger.paymentIntents.values()], form, '/v1/payment_intents')
  // A list's expansions name its items' fields under `data.`.
  const expand = (arrayParam(form, 'expand') ?? []).flatMap((path) => (path.startsWith('data.') ? [path.slice(5)] : []))
  return { status: 200, body: { ...page, data: page.data.map((intent) => answered(ledger, intent, { expand })) } }
}

/**
 * docs.stripe.com/search: eventually consistent; an object appears in results only some time after it was
 * written. Understands the query this server is asked: `metadata['key']:'value'` (and `status:'value'`).
 */
export function searchPaymentIntents(
  ledger: StripeLedger,
  form: Form,
): Answer<Stripe.ApiSearchResult<Stripe.PaymentIntent>> {
  const query = stringParam(form, 'query')
  if (!query) throw invalidRequest('Missing required param: query.', 'query', 'parameter_missing')
  const clauses = [...query.matchAll(/(metadata\['([^']+)'\]|status):'([^']*)'/g)].map((match) => ({
    metadataKey: match[2],
    value: match[3]!,
  }))
  const now = Date.now()
  const data = [...ledger.paymentIntents.values()]
    .reverse()
    .filter((intent) => (ledger.searchableAt.get(intent.id) ?? 0) <= now)
    .filter((intent) =>
      clauses.every((clause) =>
        clause.metadataKey ? intent.metadata[clause.metadataKey] === clause.value : intent.status === clause.value,
      ),
    )
  return {
    status: 200,
    body: { object: 'search_result', data, has_more: false, next_page: null, url: '/v1/payment_intents/search' },
  }
}

export function capturePaymentIntent(
  ledger: StripeLedger,
  id: string,
  form: Form,
  caller: Caller,
): Answer<Stripe.PaymentIntent> {
  const intent = retrievePaymentIntent(ledger, id).body
  if (intent.status !== 'requires_capture') throw unexpectedState(intent, 'capture')
  const amount = integerParam(form, 'amount_to_capture') ?? intent.amount_capturable
  if (amount < 1 || amount > intent.amount_capturable) {
    throw invalidRequest(
      `The amount_to_capture (${amount}) must be at least 1 and no more than the amount_capturable ` +
        `(${intent.amount_capturable}).`,
      'amount_to_capture',
      'amount_too_large',
    )
  }
  const applicationFee = applicationFeeParam(ledger, form, amount)
  if (applicationFee !== undefined) intent.application_fee_amount = applicationFee
  intent.status = 'succeeded'
  intent.amount_received = amount
  intent.amount_capturable = 0
  intent.metadata = mergedMetadata(intent.metadata, stringMap(form, 'metadata'))
  collectApplicationFee(ledger, intent)
  ledger.move({ kind: 'capture', object: intent.id, amount, idempotencyKey: caller.idempotencyKey })
  ledger.events.emit('charge.captured', chargeOf(ledger, intent), caller.idempotencyKey)
  ledger.events.emit('payment_intent.succeeded', intent, caller.idempotencyKey)
  return { status: 200, body: answered(ledger, intent, form) }
}

const CANCELABLE = new Set([
  'requires_payment_method',
  'requires_capture',
  'requires_confirmation',
  'requires_action',
  'processing',
])

export function cancelPaymentIntent(
  ledger: StripeLedger,
  id: string,
  form: Form,
  caller: Caller,
): Answer<Stripe.PaymentIntent> {
  const intent = retrievePaymentIntent(ledger, id).body
  if (!CANCELABLE.has(intent.status)) throw unexpectedState(intent, 'cancel')
  if (intent.status === 'requires_capture')
    ledger.move({
      kind: 'void',
      object: intent.id,
      amount: intent.amount_capturable,
      idempotencyKey: caller.idempotencyKey,
    })
  intent.status = 'canceled'
  intent.canceled_at = unixNow()
  intent.cancellation_reason = (stringParam(form, 'cancellation_reason') ??
    null) as Stripe.PaymentIntent.CancellationReason | null
  intent.amount_capturable = 0
  intent.next_action = null
  ledger.events.emit('payment_intent.canceled', intent, caller.idempotencyKey)
  return { status: 200, body: intent }
}

/** An uncaptured authorization lapses: Stripe cancels it itself (cancellation_reason automatic). */
export function expireAuthorization(ledger: StripeLedger, id: string): Stripe.PaymentIntent {
  const intent = retrievePaymentIntent(ledger, id).body
  if (intent.status !== 'requires_capture') throw unexpectedState(intent, 'expiry')
  ledger.move({ kind: 'void', object: intent.id, amount: intent.amount_capturable, idempotencyKey: undefined })
  intent.status = 'canceled'
  intent.canceled_at = unixNow()
  intent.cancellation_reason = 'automatic'
  intent.amount_capturable = 0
  ledger.events.emit('payment_intent.canceled', intent)
  return intent
}

/** docs.stripe.com/metadata: keys given are set, a key given an empty value is removed, the others kept. */
function mergedMetadata(current: Stripe.Metadata, update: Record<string, string> | undefined): Stripe.Metadata {
  const merged = { ...current, ...update }
  for (const [key, value] of Object.entries(update ?? {})) if (value === '') delete merged[key]
  return merged
}

function checkAmount(amount: number, currency: string): void {
  const minimum = MINIMUM_AMOUNTS[currency]
  if (minimum === undefined)
    throw invalidRequest(
      `Invalid currency: ${currency}. Stripe currently supports these currencies: ` +
        `${Object.keys(MINIMUM_AMOUNTS).join(', ')}`,
      'currency',
    )
  const shown = (value: number) => (ZERO_DECIMAL_CURRENCIES.has(currency) ? `${value}` : (value / 100).toFixed(2))
  if (amount < minimum)
    throw invalidRequest(`Amount must be at least ${shown(minimum)} ${currency}`, 'amount', 'amount_too_small')
  if (amount > MAXIMUM_AMOUNT)
    throw invalidRequest(
      `Amount must be no more than ${shown(MAXIMUM_AMOUNT)} ${currency}`,
      'amount',
      'amount_too_large',
    )
}
