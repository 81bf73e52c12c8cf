// Stripe's automatic payouts, read for the books (docs.stripe.com/payouts/reconciliation): a payout event says where
// the payout is; what it carries is listed with GET /v1/balance_transactions?payout= (sources expanded, to find the
// payment each is about), once its reconciliation has completed, which Stripe tells with
// payout.reconciliation_completed. Before that the payout is told without what it carries. A manual payout carries
// nothing Stripe can name (its maker's books account for it), and changes nothing here.
import type Stripe from 'stripe'
import type { CarriedTransaction, PayoutState } from '../later-outcomes.js'

export const PAYOUT_EVENTS = new Set([
  'payout.created',
  'payout.updated',
  'payout.paid',
  'payout.failed',
  'payout.canceled',
  'payout.reconciliation_completed',
])

/** What reading a payout needs: the client, its calls under a list's deadline, and a payment's metadata. */
export interface PayoutReading {
  stripe: Stripe
  listing<T>(work: () => Promise<T>): Promise<T>
  /** The charge a PaymentIntent was made for (its metadata.charge_id), if this service made it. */
  chargeOfIntent(paymentIntent: string): Promise<string | undefined>
}

export async function payoutState(reading: PayoutReading, payout: Stripe.Payout): Promise<PayoutState | undefined> {
  if (!payout.automatic) return undefined
  const state: PayoutState = {
    object: 'payout',
    reference: payout.id,
    status:
      payout.status === 'paid'
        ? 'paid'
        : payout.status === 'failed' || payout.status === 'canceled'
          ? 'failed'
          : 'in_transit',
    amountCents: payout.amount,
    currency: payout.currency,
    arrivalDate: new Date(payout.arrival_date * 1000).toISOString(),
    ...(payout.failure_code ? { failureCode: payout.failure_code } : {}),
  }
  if (payout.reconciliation_status !== 'completed') return state
  return { ...state, carried: await carriedBy(reading, payout.id) }
}

async function carriedBy(reading: PayoutReading, payout: string): Promise<CarriedTransaction[]> {
  const listed = await reading.listing(async () => {
    const found: Stripe.BalanceTransaction[] = []
    for await (const txn of reading.stripe.balanceTransactions.list({ payout, expand: ['data.source'], limit: 100 }))
      found.push(txn)
    return found
  })
  const carried: CarriedTransaction[] = []
  // The payout's own balance transaction is not something it carries.
  for (const txn of listed.filter((each) => each.type !== 'payout').reverse())
    carried.push(await carriedOf(reading, txn))
  return carried
}

async function carriedOf(reading: PayoutReading, txn: Stripe.BalanceTransaction): Promise<CarriedTransaction> {
  const money = { reference: txn.id, amountCents: txn.amount, feeCents: txn.fee, netCents: txn.net }
  const type = typeOf(txn)
  const source = txn.source
  if (type === 'payout_failure')
    return { ...money, type, objectReference: typeof source === 'string' ? source : (source?.id ?? '') }
  if (type === 'other' || !source || typeof source === 'string') return { ...money, type: 'other' }
  const paymentReference = paymentOf(source)
  if (!paymentReference) return { ...money, type: 'other' }
  // A Charge carries its PaymentIntent's metadata (Stripe copies it); a refund or a dispute is found through it.
  const metadata = source.object === 'charge' ? (source as Stripe.Charge).metadata : {}
  const chargeId = metadata.charge_id ?? (await reading.chargeOfIntent(paymentReference))
  return {
    ...money,
    type,
    paymentReference,
    ...(chargeId ? { chargeId } : {}),
    ...(type === 'charge' ? {} : { objectReference: source.id }),
  }
}

/** Stripe's balance transaction types, as the books name what moved. */
function typeOf(txn: Stripe.BalanceTransaction): CarriedTransaction['type'] {
  switch (txn.type) {
    case 'charge':
    case 'payment':
      return 'charge'
    case 'refund':
    case 'payment_refund':
      return 'refund'
    case 'refund_failure':
    case 'payment_failure_refund':
      return 'refund_failure'
    case 'payout_failure':
    case 'payout_cancel':
      return 'payout_failure'
    case 'adjustment':
      if (txn.reporting_category === 'dispute') return 'dispute'
      if (txn.reporting_category === 'dispute_reversal') return 'dispute_reversal'
      return 'other'
    default:
      return 'other'
  }
}

function paymentOf(source: Exclude<Stripe.BalanceTransaction['source'], string | null>): string | undefined {
  const intent = 'payment_intent' in source ? (source.payment_intent as string | { id: string } | null) : null
  return intent ? (typeof intent === 'string' ? intent : intent.id) : undefined
}
