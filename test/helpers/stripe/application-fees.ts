// Application fees, as docs.stripe.com/connect/direct-charges ("Collect fees") and docs.stripe.com/api/application_fees
// describe them: a PaymentIntent made on a connected account (Stripe-Account) may carry `application_fee_amount`,
// never more than its amount; when its payment is captured, the fee, capped at what was captured (a capture may set
// it again), is the connected account's charge's `application_fee` fee part and an ApplicationFee (`fee_…`) on the
// platform, with a balance transaction of type `application_fee` and the platform's event application_fee.created.
// A refund with `refund_application_fee` gives back the fee in full when it refunds what is left of the payment, else
// in proportion to what it refunds (Stripe does not document its rounding: half up here): a FeeRefund (`fr_…`) on
// the ApplicationFee, the platform's `application_fee_refund` balance transaction and event
// application_fee.refunded, and on the connected account the refund's balance transaction carries the fee given
// back as a negative `application_fee` fee part (the connected account gets it back with the refund).
import type Stripe from 'stripe'
import { invalidRequest, noSuch } from './errors.js'
import { type Form, integerParam, stringParam } from './form.js'
import { stripeId, unixNow } from './ids.js'
import type { StripeLedger } from './ledger.js'
import { listOf, type Answer } from './lists.js'

/** The platform's Connect application, which every fee names. */
export const PLATFORM_APPLICATION = 'ca_localstripetestserver'

/**
 * A PaymentIntent's `application_fee_amount` (create, or capture with `amountLimit` the amount captured): only on a
 * connected account, a non-negative integer no more than the payment's amount.
 */
export function applicationFeeParam(ledger: StripeLedger, form: Form, amountLimit: number): number | undefined {
  const fee = integerParam(form, 'application_fee_amount')
  if (fee === undefined) return undefined
  if (ledger.account === undefined)
    throw invalidRequest(
      'Can only apply an application_fee_amount when the PaymentIntent is attempting a direct payment (using an ' +
        'OAuth key or Stripe-Account header) or destination payment (using `transfer_data[destination]`).',
      'application_fee_amount',
    )
  if (fee < 0 || fee > amountLimit)
    throw invalidRequest(
      `The application fee (${fee}) must be at least 0 and no more than the amount (${amountLimit}).`,
      'application_fee_amount',
    )
  return fee
}

/** The fee a captured payment on a connected account pays the platform: what it asked, capped at what was captured. */
export function collectedFee(intent: Stripe.PaymentIntent): number {
  return Math.min(intent.application_fee_amount ?? 0, intent.amount_received)
}

/** The payment captured: its fee, if any, collected on the platform as an ApplicationFee (once). */
export function collectApplicationFee(ledger: StripeLedger, intent: Stripe.PaymentIntent): void {
  const amount = collectedFee(intent)
  const platform = ledger.platform
  if (amount === 0 || !platform || !ledger.account || ledger.applicationFeeOf.has(intent.id)) return
  const fee: Stripe.ApplicationFee = {
    id: stripeId('fee'),
    object: 'application_fee',
    account: ledger.account,
    amount,
    amount_refunded: 0,
    application: PLATFORM_APPLICATION,
    balance_transaction: null,
    charge: intent.latest_charge as string,
    created: unixNow(),
    currency: intent.currency,
    fee_source: { type: 'charge', charge: intent.latest_charge as string },
    livemode: false,
    originating_transaction: null,
    refunded: false,
    refunds: { object: 'list', data: [], has_more: false, url: '' },
  }
  fee.refunds.url = `/v1/application_fees/${fee.id}/refunds`
  ledger.applicationFeeOf.set(intent.id, fee.id)
  platform.applicationFees.set(fee.id, fee)
  fee.balance_transaction = platform.balance.ofApplicationFee(fee, intent.created).id
  platform.events.emit('application_fee.created', fee)
}

/**
 * What a refund of `refund.amount` gives back of its payment's fee, when it asks to (`refund_application_fee`): all
 * that is left of it when the refund leaves nothing of the payment, else its share, rounded half up.
 */
export function refundApplicationFee(ledger: StripeLedger, intent: Stripe.PaymentIntent, refund: Stripe.Refund): void {
  const feeId = ledger.applicationFeeOf.get(intent.id)
  const fee = feeId === undefined ? undefined : ledger.platform?.applicationFees.get(feeId)
  if (!fee || !ledger.platform) return
  const left = fee.amount - fee.amount_refunded
  const last = ledger.refundedOf(intent.id) === intent.amount_received
  const amount = last ? left : Math.min(left, Math.round((fee.amount * refund.amount) / intent.amount_received))
  if (amount === 0) return
  const feeRefund: Stripe.FeeRefund = {
    id: stripeId('fr'),
    object: 'fee_refund',
    amount,
    balance_transaction: null,
    created: unixNow(),
    currency: fee.currency,
    fee: fee.id,
    metadata: {},
  }
  feeRefund.balance_transaction = ledger.platform.balance.ofFeeRefund(feeRefund).id
  fee.amount_refunded += amount
  fee.refunded = fee.amount_refunded === fee.amount
  fee.refunds.data.unshift(feeRefund)
  ledger.feeRefundedBy.set(refund.id, amount)
  ledger.platform.events.emit('application_fee.refunded', fee)
}

/** GET /v1/application_fees: the platform's fees, newest first; `charge` narrows to one charge's. */
export function listApplicationFees(ledger: StripeLedger, form: Form): Answer<Stripe.ApiList<Stripe.ApplicationFee>> {
  const charge = stringParam(form, 'charge')
  const fees = [...ledger.applicationFees.values()].filter((fee) => charge === undefined || fee.charge === charge)
  return { status: 200, body: listOf(fees, form, '/v1/application_fees') }
}

export function retrieveApplicationFee(ledger: StripeLedger, id: string): Answer<Stripe.ApplicationFee> {
  const fee = ledger.applicationFees.get(id)
  if (!fee) throw noSuch('application_fee', id, 'id')
  return { status: 200, body: fee }
}
