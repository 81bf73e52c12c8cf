// The Stripe processor (PROCESSOR=stripe), on the official SDK: a charge is a PaymentIntent confirmed with the
// charge's source and captured at once; an authorization one with capture_method manual; a capture captures it
// (amount_to_capture, the rest released); a void cancels it; a refund is a Refund of it. Every money-moving call
// carries the operation id as its Idempotency-Key, the same on every retry and takeover, and in metadata with the
// account. A call for an account linked to a connected account (Stripe Connect: a direct charge) is made on it, with
// the client that sends Stripe-Account on every request (client.ts stripeClients), lookups and its charge's later
// calls included; there, the platform's fee goes as application_fee_amount (set again by a partial capture) and a
// refund may give it back (refund_application_fee), its balance transaction telling what it gave. Nothing
// Stripe-typed leaves this module: the service sees outcomes and the boundary's errors.
import Stripe from 'stripe'
import type {
  CaptureRequest,
  ChargeOutcome,
  ChargeRequest,
  LookupRequest,
  NextAction,
  OperationRecord,
  PaymentProcessor,
  RefundOutcome,
  RefundRequest,
  SettlementOutcome,
  VoidRequest,
} from '../processor.js'
import { ProcessorRequestError, ProcessorUnavailableError } from '../processor.js'
import { type StripeClients, withDeadline } from './client.js'
import { toBoundaryError } from './errors.js'
import { stripeLater } from './later-outcomes.js'
import { FUNDS, capturedFunds, feeGivenBackBy } from './funds.js'

type ChargeKind = 'charge' | 'authorization'

/**
 * Stripe keeps an idempotency key for at least 24 hours (docs.stripe.com/api/idempotent_requests). A lookup by key
 * (lookupCharge) is sound only while the key is kept; an older operation is looked for in the list of
 * PaymentIntents instead.
 */
const KEY_KEPT_MS = 23 * 3600_000
/** Stripe's clock and the database's may disagree: a list by creation time starts this much earlier. */
const CLOCK_MARGIN_SECONDS = 600

export function createStripeProcessor(options: {
  /** The platform's client, and each connected account's. */
  clients: StripeClients
  timeoutMs: number
  webhookSecret?: string | undefined
  /** The signing secret of the Connect endpoint, which Stripe sends every connected account's events to. */
  connectWebhookSecret?: string | undefined
}): PaymentProcessor {
  const { clients, timeoutMs } = options
  /** The client for the processor account the request is made on: the platform's, or a connected account's. */
  const stripeFor = (request: { processorAccount: string | null }) => clients(request.processorAccount)

  /** One SDK call with all its retries, none of it sent after PROCESSOR_TIMEOUT_MS. Stripe's errors stay raw. */
  const bounded = <T>(work: () => Promise<T>): Promise<T> => withDeadline(Date.now() + timeoutMs, work)
  /** The same, its errors the boundary's. */
  const call = <T>(work: () => Promise<T>): Promise<T> =>
    bounded(work).catch((error: unknown) => {
      throw toBoundaryError(error)
    })

  /**
   * A money-moving call with its charge's balance transaction expanded in the answer (what Stripe kept, and when
   * the rest is available: capturedFunds). Every send under a key carries the same expansion, as Stripe compares
   * every parameter of a request sent again under its key. Stripe's errors stay raw.
   */
  const withFunds = <Params extends object, T>(send: (params: Params) => Promise<T>, params: Params): Promise<T> =>
    bounded(() => send({ ...params, expand: FUNDS }))

  /** A PaymentIntent confirmed at once; a decline is its outcome, not an error. */
  async function createIntent(kind: ChargeKind, request: ChargeRequest): Promise<ChargeOutcome> {
    const create = (params: Stripe.PaymentIntentCreateParams) =>
      stripeFor(request).paymentIntents.create(params, { idempotencyKey: request.idempotencyKey })
    try {
      return chargeOutcome(kind, await withFunds(create, intentParams(kind, request)))
    } catch (error) {
      if (error instanceof Stripe.errors.StripeCardError) return declined(error)
      throw toBoundaryError(error)
    }
  }

  /**
   * What Stripe did with a charge, from reads that cannot lag (never the Search API, which is eventually
   * consistent: docs.stripe.com/search). While Stripe keeps the key, the key itself answers: a PaymentIntent is
   * created under it with the same parameters but not confirmed (no money moves). If Stripe never saw the key,
   * that probe now owns it, and a late call under it would be refused (idempotency_error) and could never charge:
   * "never" is final. If Stripe saw it, the probe is refused as another request under a used key, and the very
   * request sent is replayed (a replay executes nothing) for the PaymentIntent it made.
   */
  async function lookupCharge(
    kind: ChargeKind,
    request: ChargeRequest,
    notBefore: Date,
  ): Promise<ChargeOutcome | undefined> {
    if (Date.now() - notBefore.getTime() > KEY_KEPT_MS) return listedCharge(kind, request, notBefore)
    const stripe = stripeFor(request)
    // What only a confirmation may carry (return_url, mandate_data) is left out: the probe is never confirmed.
    const { return_url: _returnUrl, mandate_data: _mandate, ...sent } = intentParams(kind, request)
    const probe = { ...sent, confirm: false, metadata: { ...sent.metadata, lookup_probe: 'true' } }
    try {
      const owned = await bounded(() => stripe.paymentIntents.create(probe, { idempotencyKey: request.idempotencyKey }))
      await call(() =>
        stripe.paymentIntents.cancel(owned.id, {}, { idempotencyKey: `${request.idempotencyKey}:probe-cancel` }),
      ).catch(() => {})
      return undefined
    } catch (error) {
      if (!(error instanceof Stripe.errors.StripeIdempotencyError)) {
        const mapped = toBoundaryError(error)
        // Refused for its parameters (an unknown payment method): the request sent was refused alike.
        if (mapped instanceof ProcessorRequestError && mapped.field) return undefined
        throw mapped
      }
    }
    return createIntent(kind, request)
  }

  /** Past the key's retention: the PaymentIntents created since the claim, listed (lists do not lag), by metadata. */
  async function listedCharge(
    kind: ChargeKind,
    request: ChargeRequest,
    notBefore: Date,
  ): Promise<ChargeOutcome | undefined> {
    const created = { gte: Math.floor(notBefore.getTime() / 1000) - CLOCK_MARGIN_SECONDS }
    const stripe = stripeFor(request)
    const found = await call(async () => {
      const expand = FUNDS.map((path) => `data.${path}`)
      for await (const intent of stripe.paymentIntents.list({ created, limit: 100, expand })) {
        if (intent.metadata.operation_id === request.idempotencyKey && intent.metadata.lookup_probe === undefined)
          return intent
      }
      return undefined
    })
    return found && chargeOutcome(kind, found)
  }

  async function lookupCapture(request: CaptureRequest): Promise<OperationRecord | undefined> {
    const { chargeReference, idempotencyKey } = request
    const intent = await call(() => stripeFor(request).paymentIntents.retrieve(chargeReference, { expand: FUNDS }))
    if (intent.status === 'requires_capture') return undefined
    // Captured by this operation: its id in the metadata the capture set (or none, if the API kept none; the books
    // allow one capture or void of a charge at a time, so it can only be this one).
    if (intent.status === 'succeeded' && (intent.metadata.capture_operation_id ?? idempotencyKey) === idempotencyKey) {
      return { kind: 'capture', outcome: settledWith(intent) }
    }
    throw new Error(
      `the books and Stripe disagree: capture ${idempotencyKey} is pending, PaymentIntent ${intent.id} is ` +
        `${intent.status}`,
    )
  }

  async function lookupVoid(request: VoidRequest): Promise<OperationRecord | undefined> {
    const { chargeReference, idempotencyKey } = request
    const intent = await call(() => stripeFor(request).paymentIntents.retrieve(chargeReference))
    if (intent.status === 'requires_capture') return undefined
    if (intent.status === 'canceled') return { kind: 'void', outcome: { processorReference: intent.id } }
    throw new Error(
      `the books and Stripe disagree: void ${idempotencyKey} is pending, PaymentIntent ${intent.id} is ` +
        `${intent.status}`,
    )
  }

  /** A PaymentIntent's refunds, listed (lists do not lag), by the operation id in their metadata. */
  async function lookupRefund(request: RefundRequest): Promise<OperationRecord | undefined> {
    const { chargeReference, idempotencyKey } = request
    const expand = request.refundApplicationFee ? ['data.balance_transaction'] : []
    const refund = await call(async () => {
      const listed = stripeFor(request).refunds.list({ payment_intent: chargeReference, limit: 100, expand })
      for await (const each of listed) {
        if (each.metadata?.operation_id === idempotencyKey) return each
      }
      return undefined
    })
    return refund && { kind: 'refund', outcome: refundOutcome(refund) }
  }

  return {
    keyRetentionSeconds: KEY_KEPT_MS / 1000,
    later: stripeLater(clients, {
      webhookSecret: options.webhookSecret,
      connectWebhookSecret: options.connectWebhookSecret,
    }),
    charge: (request) => createIntent('charge', request),
    authorize: (request) => createIntent('authorization', request),
    async capture(request) {
      const params = {
        amount_to_capture: request.amountCents,
        ...(request.applicationFeeCents ? { application_fee_amount: request.applicationFeeCents } : {}),
        metadata: { capture_operation_id: request.idempotencyKey },
      }
      const capture = (sent: Stripe.PaymentIntentCaptureParams) =>
        stripeFor(request).paymentIntents.capture(request.chargeReference, sent, {
          idempotencyKey: request.idempotencyKey,
        })
      const intent = await withFunds(capture, params).catch((error: unknown) => {
        throw toBoundaryError(error)
      })
      return settledWith(intent)
    },
    async void(request) {
      // A cancellation takes no metadata; its key is the operation id all the same.
      const intent = await call(() =>
        stripeFor(request).paymentIntents.cancel(
          request.chargeReference,
          {},
          { idempotencyKey: request.idempotencyKey },
        ),
      )
      return { processorReference: intent.id }
    },
    async refund(request) {
      const params = {
        payment_intent: request.chargeReference,
        amount: request.amountCents,
        metadata: metadataOf(request),
        // Only a refund that gives the platform's fee back asks for its balance transaction (what it gave back): the
        // parameters of a refund sent before there were fees stay as they were sent.
        ...(request.refundApplicationFee ? { refund_application_fee: true, expand: ['balance_transaction'] } : {}),
      }
      const refund = await call(() =>
        stripeFor(request).refunds.create(params, { idempotencyKey: request.idempotencyKey }),
      )
      return refundOutcome(refund)
    },
    async lookup(lookup: LookupRequest): Promise<OperationRecord | undefined> {
      switch (lookup.kind) {
        case 'charge':
        case 'authorization': {
          const outcome = await lookupCharge(lookup.kind, lookup.request, lookup.notBefore)
          return outcome && { kind: lookup.kind, outcome }
        }
        case 'capture':
          return lookupCapture(lookup.request)
        case 'void':
          return lookupVoid(lookup.request)
        case 'refund':
          return lookupRefund(lookup.request)
        default:
          // A kind added to the boundary and not here fails to compile, naming it.
          return ((kind: never) => Promise.reject(new Error(`no lookup for ${String(kind)}`)))(lookup)
      }
    },
  }
}

function metadataOf(request: { idempotencyKey: string; accountId: string }): Record<string, string> {
  return { operation_id: request.idempotencyKey, account_id: request.accountId }
}

/** The one PaymentIntent a charge is: every field from the request, so a retry and a lookup send the very same. */
function intentParams(kind: ChargeKind, request: ChargeRequest): Stripe.PaymentIntentCreateParams {
  return {
    amount: request.amountCents,
    currency: request.currency,
    payment_method: request.source,
    confirm: true,
    capture_method: kind === 'authorization' ? 'manual' : 'automatic',
    // Payment methods that need no redirect to pay: cards (3-D Secure is not a redirect of that kind) and bank debits.
    automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    ...(request.description ? { description: request.description } : {}),
    // Where the customer comes back after 3-D Secure; without it, Stripe answers use_stripe_sdk (Stripe.js).
    ...(request.returnUrl ? { return_url: request.returnUrl } : {}),
    ...(request.mandate
      ? {
          mandate_data: {
            customer_acceptance: {
              type: 'online',
              online: { ip_address: request.mandate.ipAddress, user_agent: request.mandate.userAgent },
            },
          },
        }
      : {}),
    // The platform's fee, on a connected account (Stripe Connect), taken by Stripe from the payment for the platform.
    ...(request.applicationFeeCents ? { application_fee_amount: request.applicationFeeCents } : {}),
    // charge_id: what Stripe's events about this payment are recorded against (src/processor/stripe/later-outcomes.ts).
    metadata: { ...metadataOf(request), charge_id: request.chargeId },
  }
}

/** A refund's outcome: the Refund, and the fees it gave back when its balance transaction was expanded. */
function refundOutcome(refund: Stripe.Refund): RefundOutcome {
  const txn = refund.balance_transaction
  const given = typeof txn === 'object' && txn !== null ? feeGivenBackBy(txn) : []
  return { processorReference: refund.id, ...(given.length ? { given } : {}) }
}

/** A capture's outcome: the PaymentIntent, and what Stripe kept of what it captured. */
function settledWith(intent: Stripe.PaymentIntent): SettlementOutcome {
  const funds = capturedFunds(intent)
  return { processorReference: intent.id, ...(funds ? { funds } : {}) }
}

/** What a PaymentIntent says of the charge it is. */
function chargeOutcome(kind: ChargeKind, intent: Stripe.PaymentIntent): ChargeOutcome {
  const succeeded = kind === 'authorization' ? intent.status === 'requires_capture' : intent.status === 'succeeded'
  if (succeeded) {
    const funds = kind === 'charge' ? capturedFunds(intent) : undefined
    return { status: 'succeeded', processorReference: intent.id, ...(funds ? { funds } : {}) }
  }
  const error = intent.last_payment_error
  if (intent.status === 'requires_payment_method' && error) {
    return {
      status: 'failed',
      failureCode: error.decline_code ?? error.code ?? 'card_declined',
      failureMessage: error.message ?? 'The card was declined.',
      processorReference: intent.id,
    }
  }
  if (intent.status === 'requires_action') {
    const redirect = intent.next_action?.redirect_to_url
    const nextAction: NextAction = redirect?.url
      ? { type: 'redirect_to_url', url: redirect.url, returnUrl: redirect.return_url ?? null }
      : { type: 'use_stripe_sdk', clientSecret: intent.client_secret ?? '' }
    return { status: 'requires_action', processorReference: intent.id, nextAction }
  }
  if (intent.status === 'processing') return { status: 'processing', processorReference: intent.id }
  if (intent.status === 'canceled')
    return {
      status: 'failed',
      failureCode: 'canceled',
      failureMessage: 'The payment was canceled at the processor.',
      processorReference: intent.id,
    }
  throw new ProcessorUnavailableError(`PaymentIntent ${intent.id} is ${intent.status}: its outcome is not known yet`)
}

/** docs.stripe.com/declines: a card_error carries the decline code, the message and the PaymentIntent. */
function declined(error: Stripe.errors.StripeCardError): ChargeOutcome {
  return {
    status: 'failed',
    failureCode: error.decline_code ?? error.code ?? 'card_declined',
    // Stripe's own words, for the customer (the SDK's message also carries the request id).
    failureMessage: (error.raw as Stripe.StripeRawError).message ?? 'Your card was declined.',
    ...(error.payment_intent ? { processorReference: error.payment_intent.id } : {}),
  }
}
