// Payouts as docs.stripe.com/api/payouts describes them: money sent from the Stripe balance to the bank account,
// `amount` and `currency` required, `description` and `metadata` kept; created `pending` (payout.created), and
// listed newest first, filtered by `created` and `status`.
import type Stripe from 'stripe'
import { invalidRequest, noSuch } from './errors.js'
import { type Form, integerParam, stringMap, stringParam } from './form.js'
import { stripeId, unixNow } from './ids.js'
import type { StripeLedger } from './ledger.js'
import { listOf, type Answer } from './lists.js'
import type { Caller } from './payment-intents.js'

/** A standard payout arrives about two business days later (docs.stripe.com/payouts#payout-speed). */
const ARRIVAL_SECONDS = 2 * 86_400

export function createPayout(ledger: StripeLedger, form: Form, caller: Caller): Answer<Stripe.Payout> {
  const amount = integerParam(form, 'amount')
  if (amount === undefined) throw invalidRequest('Missing required param: amount.', 'amount', 'parameter_missing')
  if (amount < 1) throw invalidRequest('Invalid positive integer', 'amount')
  const currency = stringParam(form, 'currency')
  if (currency === undefined) throw invalidRequest('Missing required param: currency.', 'currency', 'parameter_missing')
  const payout = payoutOf(amount, currency, {
    description: stringParam(form, 'description') ?? null,
    metadata: stringMap(form, 'metadata') ?? {},
  })
  ledger.payouts.set(payout.id, payout)
  ledger.move({ kind: 'payout', object: payout.id, amount, idempotencyKey: caller.idempotencyKey })
  ledger.events.emit('payout.created', payout, caller.idempotencyKey)
  return { status: 200, body: payout }
}

export function retrievePayout(ledger: StripeLedger, id: string): Answer<Stripe.Payout> {
  const payout = ledger.payouts.get(id)
  if (!payout) throw noSuch('payout', id, 'payout')
  return { status: 200, body: payout }
}

export function listPayouts(ledger: StripeLedger, form: Form): Answer<Stripe.ApiList<Stripe.Payout>> {
  const status = stringParam(form, 'status')
  const payouts = [...ledger.payouts.values()].filter((payout) => status === undefined || payout.status === status)
  return { status: 200, body: listOf(payouts, form, '/v1/payouts') }
}

/**
 * A Payout as Stripe describes one, just created: manual and pending (what POST /v1/payouts makes) unless `fields`
 * say otherwise (an automatic one, in transit, made by Stripe's schedule: balance.ts).
 */
export function payoutOf(amount: number, currency: string, fields: Partial<Stripe.Payout> = {}): Stripe.Payout {
  const created = unixNow()
  return {
    id: stripeId('po'),
    object: 'payout',
    amount,
    application_fee: null,
    application_fee_amount: null,
    arrival_date: created + ARRIVAL_SECONDS,
    automatic: false,
    balance_transaction: stripeId('txn'),
    created,
    currency,
    description: null,
    destination: 'ba_test_bank_account',
    failure_balance_transaction: null,
    failure_code: null,
    failure_message: null,
    livemode: false,
    metadata: {},
    method: 'standard',
    original_payout: null,
    payout_method: null,
    reconciliation_status: 'not_applicable',
    reversed_by: null,
    source_type: 'card',
    statement_descriptor: null,
    status: 'pending',
    trace_id: null,
    type: 'bank_account',
    ...fields,
  }
}
