// What Stripe tells after its answers, read for the books: its webhooks (verified over the raw bytes with the
// endpoint's signing secret, by the SDK), its list of events (kept 30 days; a list, not the Search API, so it does
// not lag), and its PaymentIntents and Refunds as they are now, for the comparison. Only objects this service made
// count: a PaymentIntent carries the charge it was made for in metadata.charge_id (src/processor/stripe/stripe.ts);
// one without (a payment taken in the Dashboard, a lookup's probe) changes nothing here.
import Stripe from 'stripe'
import type {
  FeePart,
  DisputeState,
  DisputeStatus,
  LaterOutcomes,
  PaymentState,
  PayoutState,
  PlatformFeesAt,
  ProcessorChange,
  ProcessorEvent,
  RefundState,
} from '../later-outcomes.js'
import { WebhookRefusedError } from '../later-outcomes.js'
import { type StripeClients, withDeadline } from './client.js'
import { toBoundaryError } from './errors.js'
import { capturedFunds, FUNDS, feeGivenBackBy, feePartsOf } from './funds.js'
import { PAYOUT_EVENTS, type PayoutReading, payoutState } from './payouts.js'

/** How old a delivery's signature may be: Stripe's own default tolerance (docs.stripe.com/webhooks#replay-attacks). */
const SIGNATURE_TOLERANCE_SECONDS = 300
/** Lists page through many objects: their calls get longer than one payment's deadline, but never none. */
const LIST_DEADLINE_MS = 120_000

const PAYMENT_EVENTS = new Set([
  'payment_intent.succeeded',
  'payment_intent.processing',
  'payment_intent.payment_failed',
  'payment_intent.canceled',
  'payment_intent.amount_capturable_updated',
  'payment_intent.requires_action',
])
const REFUND_EVENTS = new Set(['refund.created', 'refund.updated', 'refund.failed'])
const DISPUTE_EVENTS = new Set([
  'charge.dispute.created',
  'charge.dispute.updated',
  'charge.dispute.closed',
  'charge.dispute.funds_withdrawn',
  'charge.dispute.funds_reinstated',
])

/** Every event type the service reads: what a webhook endpoint at Stripe must be sent (docs/later-outcomes.md). */
export const FOLLOWED_EVENTS: readonly string[] = [
  ...PAYMENT_EVENTS,
  'charge.refunded',
  ...REFUND_EVENTS,
  ...DISPUTE_EVENTS,
  ...PAYOUT_EVENTS,
]

export function stripeLater(
  clients: StripeClients,
  options: { webhookSecret?: string | undefined; connectWebhookSecret?: string | undefined },
): LaterOutcomes {
  const listing = <T>(work: () => Promise<T>): Promise<T> =>
    withDeadline(Date.now() + LIST_DEADLINE_MS, work).catch((error: unknown) => {
      throw toBoundaryError(error)
    })
  // The endpoint's secrets: the platform's own events, and (Connect) every connected account's.
  const secrets = [options.webhookSecret, options.connectWebhookSecret].filter((secret) => secret !== undefined)

  /** An event as the books read it; what it does not say itself is read on the processor account it is about. */
  async function read(event: Stripe.Event): Promise<ProcessorEvent> {
    const processorAccount = event.account ?? null
    const told = {
      id: event.id,
      type: event.type,
      createdAt: new Date(event.created * 1000),
      ...(processorAccount ? { processorAccount } : {}),
    }
    return { ...told, changes: await readerOn(clients(processorAccount), listing).changesOf(event) }
  }

  return {
    name: 'stripe',
    async receive(rawBody, headers) {
      if (secrets.length === 0)
        throw new WebhookRefusedError('STRIPE_WEBHOOK_SECRET is not set: no delivery can be verified')
      const signature = headers['stripe-signature']
      if (typeof signature !== 'string') throw new WebhookRefusedError('no Stripe-Signature header')
      let refusal = 'the signature does not verify'
      for (const secret of secrets) {
        try {
          return await read(
            clients(null).webhooks.constructEvent(rawBody, signature, secret, SIGNATURE_TOLERANCE_SECONDS),
          )
        } catch (error) {
          if (!(error instanceof Stripe.errors.StripeSignatureVerificationError)) throw error
          refusal = error.message
        }
      }
      throw new WebhookRefusedError(refusal)
    },
    async *eventsSince(since, processorAccount) {
      const stripe = clients(processorAccount)
      const events = await listing(async () => {
        const found: Stripe.Event[] = []
        for await (const event of stripe.events.list({
          created: { gte: Math.floor(since.getTime() / 1000) },
          limit: 100,
        }))
          found.push(event)
        return found
      })
      // The list is newest first; told oldest first, as they happened. A connected account's list names no account
      // in its events (Stripe sets `account` only on what a Connect endpoint is sent): they are the account's.
      for (const event of events.reverse()) yield await read({ ...event, account: processorAccount ?? undefined })
    },
    async statesSince(since, references, processorAccount) {
      const stripe = clients(processorAccount)
      const created = { gte: Math.floor(since.getTime() / 1000) }
      return listing(async () => {
        const payments = new Map<string, PaymentState>()
        for await (const intent of stripe.paymentIntents.list({ created, limit: 100 })) {
          const payment = paymentState(intent)
          if (payment) payments.set(payment.reference, payment)
        }
        for (const reference of references.filter((each) => !payments.has(each))) {
          const payment = paymentState(await stripe.paymentIntents.retrieve(reference))
          if (payment) payments.set(reference, payment)
        }
        const refunds: RefundState[] = []
        for await (const refund of stripe.refunds.list({ created, limit: 100 })) {
          const paymentReference = idOf(refund.payment_intent)
          if (!paymentReference) continue
          const operationId = refund.metadata?.operation_id
          // One made in the Dashboard is the books' only if its payment is: its PaymentIntent says.
          const chargeId = operationId
            ? undefined
            : (payments.get(paymentReference)?.chargeId ??
              (await stripe.paymentIntents.retrieve(paymentReference)).metadata.charge_id)
          refunds.push({
            object: 'refund',
            reference: refund.id,
            paymentReference,
            status: refundStatus(refund.status),
            amountCents: refund.amount,
            createdAt: new Date(refund.created * 1000),
            ...(operationId ? { operationId } : {}),
            ...(chargeId ? { chargeId } : {}),
            ...(refund.failure_reason ? { failureReason: refund.failure_reason } : {}),
          })
        }
        return { payments: [...payments.values()], refunds }
      })
    },
    async fundsOf(payment, processorAccount) {
      const stripe = clients(processorAccount)
      return capturedFunds(await listing(() => stripe.paymentIntents.retrieve(payment.reference, { expand: FUNDS })))
    },
    // The platform's application fees, all of them (docs.stripe.com/api/application_fees/list), by connected account.
    platformFees: () =>
      listing(async () => {
        const sums = new Map<string, PlatformFeesAt>()
        for await (const fee of clients(null).applicationFees.list({ limit: 100 })) {
          const processorAccount = typeof fee.account === 'string' ? fee.account : fee.account.id
          const key = `${processorAccount} ${fee.currency}`
          const sum = sums.get(key) ?? { processorAccount, currency: fee.currency, collectedCents: 0, refundedCents: 0 }
          sum.collectedCents += fee.amount
          sum.refundedCents += fee.amount_refunded
          sums.set(key, sum)
        }
        return [...sums.values()]
      }),
  }
}

/** Reads events' objects with one processor account's client: the platform's, or a connected account's. */
function readerOn(stripe: Stripe, listing: <T>(work: () => Promise<T>) => Promise<T>) {
  const intentOf = async (id: string) => listing(() => stripe.paymentIntents.retrieve(id))
  const reading: PayoutReading = {
    stripe,
    listing,
    chargeOfIntent: async (id) => (await intentOf(id)).metadata.charge_id,
  }

  /** The changes an event tells, reading what the event alone does not say. */
  async function changesOf(event: Stripe.Event): Promise<ProcessorChange[]> {
    const object = event.data.object as unknown
    if (PAYMENT_EVENTS.has(event.type)) {
      const payment = paymentState(object as Stripe.PaymentIntent)
      return payment ? [payment] : []
    }
    if (REFUND_EVENTS.has(event.type)) return [await refundState(object as Stripe.Refund)].filter(isChange<RefundState>)
    if (event.type === 'charge.refunded') {
      // A Charge, whose refunds are not in it (API versions since 2022-11-15 leave them out): listed instead.
      const intent = (object as Stripe.Charge).payment_intent
      if (!intent) return []
      const id = typeof intent === 'string' ? intent : intent.id
      const refunds = await listing(async () => {
        const found: Stripe.Refund[] = []
        for await (const refund of stripe.refunds.list({ payment_intent: id, limit: 100 })) found.push(refund)
        return found
      })
      return (await Promise.all(refunds.map(refundState))).filter(isChange<RefundState>)
    }
    if (DISPUTE_EVENTS.has(event.type))
      return [await disputeState(object as Stripe.Dispute)].filter(isChange<DisputeState>)
    if (PAYOUT_EVENTS.has(event.type))
      return [await payoutState(reading, object as Stripe.Payout)].filter(isChange<PayoutState>)
    return []
  }

  /** A refund's charge: ours carry their operation id; one made in the Dashboard is found through its PaymentIntent. */
  async function refundState(refund: Stripe.Refund): Promise<RefundState | undefined> {
    const paymentReference = idOf(refund.payment_intent)
    if (!paymentReference) return undefined
    const state: RefundState = {
      object: 'refund',
      reference: refund.id,
      paymentReference,
      status: refundStatus(refund.status),
      amountCents: refund.amount,
      ...(refund.failure_reason ? { failureReason: refund.failure_reason } : {}),
    }
    const operationId = refund.metadata?.operation_id
    if (operationId) return { ...state, operationId }
    const chargeId = (await intentOf(paymentReference)).metadata.charge_id
    if (!chargeId) return undefined
    const given = await feeGivenBack(refund)
    return { ...state, chargeId, ...(given.length ? { given } : {}) }
  }

  /** What a refund made in the Dashboard gave back of the platform's fee, from its balance transaction. */
  async function feeGivenBack(refund: Stripe.Refund): Promise<FeePart[]> {
    const txn = refund.balance_transaction
    if (typeof txn !== 'string') return []
    return feeGivenBackBy(await listing(() => stripe.balanceTransactions.retrieve(txn)))
  }

  async function disputeState(dispute: Stripe.Dispute): Promise<DisputeState | undefined> {
    const paymentReference = idOf(dispute.payment_intent)
    if (!paymentReference) return undefined
    const chargeId = (await intentOf(paymentReference)).metadata.charge_id
    if (!chargeId) return undefined
    // The money moved so far, as its balance transactions say, with Stripe's own fee (docs.stripe.com/api/disputes
    // /object: zero, one or two of them; none for an inquiry, or before charge.dispute.funds_withdrawn).
    const moved = (txn: Stripe.BalanceTransaction | undefined) =>
      txn && { amountCents: Math.abs(txn.amount), fees: feePartsOf(txn) }
    const inCurrency = dispute.balance_transactions.filter((txn) => txn.currency === dispute.currency)
    const withdrawal = moved(inCurrency.find((txn) => txn.amount < 0))
    const reinstatement = moved(inCurrency.find((txn) => txn.amount > 0))
    return {
      object: 'dispute',
      reference: dispute.id,
      paymentReference,
      chargeId,
      status: disputeStatus(dispute.status),
      amountCents: dispute.amount,
      reason: dispute.reason,
      ...(withdrawal && { withdrawal }),
      ...(reinstatement && { reinstatement }),
    }
  }

  return { changesOf }
}

/** A PaymentIntent as a payment of the books, if this service made it. */
export function paymentState(intent: Stripe.PaymentIntent): PaymentState | undefined {
  const chargeId = intent.metadata.charge_id
  if (!chargeId || intent.metadata.lookup_probe !== undefined) return undefined
  const base = {
    object: 'payment' as const,
    reference: intent.id,
    chargeId,
    createdAt: new Date(intent.created * 1000),
    amountCents: intent.amount,
    amountCapturedCents: intent.amount_received,
  }
  switch (intent.status) {
    case 'requires_action':
      return { ...base, status: 'requires_action' }
    case 'processing':
      return { ...base, status: 'processing' }
    case 'requires_capture':
      return { ...base, status: 'requires_capture' }
    case 'succeeded':
      return { ...base, status: 'succeeded' }
    case 'canceled':
      // 'automatic': Stripe canceled it itself, as it does an authorization that lapsed.
      return {
        ...base,
        status: 'canceled',
        cancellation:
          intent.cancellation_reason === 'automatic' || intent.cancellation_reason === 'expired'
            ? 'expired'
            : 'canceled',
      }
    default: {
      // requires_payment_method after a confirmation: declined, or the customer failed to authenticate.
      const error = intent.last_payment_error
      return {
        ...base,
        status: 'failed',
        failureCode: error?.decline_code ?? error?.code ?? 'payment_failed',
        failureMessage: error?.message ?? 'The payment failed.',
      }
    }
  }
}

function refundStatus(status: string | null): RefundState['status'] {
  return status === 'succeeded' || status === 'failed' || status === 'canceled' ? status : 'pending'
}

/** Stripe's dispute statuses, as the books keep them: open, then won or lost. */
function disputeStatus(status: Stripe.Dispute.Status): DisputeStatus {
  if (status === 'won' || status === 'warning_closed' || status === 'prevented') return 'won'
  if (status === 'lost') return 'lost'
  if (status === 'under_review' || status === 'warning_under_review' || status === 'appeal_under_review')
    return 'under_review'
  return 'needs_response'
}

function idOf(value: string | { id: string } | null | undefined): string | undefined {
  return value ? (typeof value === 'string' ? value : value.id) : undefined
}

function isChange<T extends ProcessorChange>(change: T | undefined): change is T {
  return change !== undefined
}
