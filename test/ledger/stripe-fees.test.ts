// Stripe's own fees (docs/ledger.md, "Fees and availability"): a charge or a capture posts what Stripe kept and the
// day it makes the rest available, from the charge's balance transaction expanded in Stripe's answer, and a dispute
// the fee its event tells (the dispute's balance transactions), whatever the pricing (FEE_*) says. A payment decided
// later (3-D Secure, a bank debit) is told by an event that carries no balance transaction: the service reads it
// from Stripe before accepting the event (src/processor-events/inbox.ts, withCapturedFunds).
import { beforeAll, describe, expect, it } from 'vitest'
import { recordCharge } from '../../src/charges/record-charge.js'
import { newId } from '../../src/db/ids.js'
import { payoutReport } from '../../src/processor-events/payout-report.js'
import { chargeBody, type TestAccount, useTestApp } from '../helpers/app.js'
import { LATER_SETTINGS, type LaterAtProcessor, laterAt } from '../helpers/at-processor.js'
import { useProcessor } from '../helpers/processors.js'
import { dashboardOf } from '../helpers/stripe/dashboard.js'

const DAY = 86_400_000
// Not the service's pricing (2.9% + 30, docs/operations.md): what an account of its own pricing pays Stripe.
const STRIPE_PRICING = { percent: 0.015, fixed: 25, dispute: 2000 }
const stripeFee = (cents: number) => Math.round(cents * STRIPE_PRICING.percent) + STRIPE_PRICING.fixed
const pricingFee = (cents: number) => Math.round(cents * 0.029) + 30

describe('fees from Stripe', () => {
  const processor = useProcessor('stripe', { cardPricing: STRIPE_PRICING })
  const suite = useTestApp({ processor: processor.factory })
  let later: LaterAtProcessor
  beforeAll(async () => {
    later = await laterAt('stripe', suite.context, processor)
  })

  async function transactionOf(account: TestAccount, chargeId: string) {
    const listed = await account.get(`/v1/balance_transactions?source=${chargeId}`)
    expect(listed.statusCode).toBe(200)
    const [txn] = listed.json().data
    return txn as { id: string; amount_cents: number; fee_cents: number; fee_details: unknown[]; available_on: string }
  }

  /** The payout report's line of one payout. */
  const reportOf = async (payout: string) =>
    (await payoutReport(suite.context.sql, new Date(Date.now() - DAY))).find((each) => each.payout === payout)

  /** Stripe's own balance transaction of the payment, and its day available as the API writes it. */
  function stripeTransactionOf(reference: string) {
    const intent = processor.stripe().ledger.paymentIntent(reference)!
    const txn = processor.stripe().ledger.balance.ofPayment(intent)!
    return { fee: txn.fee, availableOn: new Date(txn.available_on * 1000).toISOString() }
  }

  it('when a charge is made and an authorization captured in part, then the books post the fee Stripe kept and its day, and the payout that carries them agrees', async () => {
    const account = await suite.context.newAccount()
    const charged = (await account.post('/v1/charges', chargeBody({ amount_cents: 10_000 }))).json()
    const authorized = (await account.post('/v1/charges', chargeBody({ amount_cents: 8_000, capture: false }))).json()
    const captured = await account.post(`/v1/charges/${authorized.id}/capture`, { amount_cents: 6_500 })
    expect(captured.statusCode).toBe(200)

    for (const [charge, cents] of [
      [charged, 10_000],
      [authorized, 6_500],
    ] as const) {
      const fee = stripeFee(cents)
      expect(fee).not.toBe(pricingFee(cents))
      expect(stripeTransactionOf(charge.processor_reference).fee).toBe(fee)
      expect(await transactionOf(account, charge.id)).toMatchObject({
        amount_cents: cents,
        fee_cents: fee,
        fee_details: [
          { type: 'processor_fee', amount_cents: fee, currency: 'usd', description: 'Stripe processing fees' },
        ],
        net_cents: cents - fee,
        available_on: stripeTransactionOf(charge.processor_reference).availableOn,
      })
    }

    const payout = await later.payOut(new Date(Date.now() + 3 * DAY))
    await later.settlePayout(payout, 'paid')
    await later.reconcile()
    const line = await reportOf(payout)
    expect(line).toMatchObject({ differences: [], fee_differences: [], difference_cents: 0 })
    expect(line?.fees_cents).toBe(stripeFee(10_000) + stripeFee(6_500))
  })

  it('when a dispute is lost, then the books withdraw the dispute fee Stripe kept, told with the dispute, and the payout that carries it agrees', async () => {
    const account = await suite.context.newAccount()
    const charge = (await account.post('/v1/charges', chargeBody({ amount_cents: 5_000 }))).json()
    await later.dispute(charge.processor_reference)
    await later.closeDispute(charge.processor_reference, 'lost')
    await later.delivered()
    const disputeId = (await account.get(`/v1/charges/${charge.id}`)).json().dispute.processor_reference
    expect(await transactionOf(account, disputeId)).toMatchObject({
      amount_cents: -5_000,
      fee_cents: STRIPE_PRICING.dispute,
      fee_details: [{ type: 'dispute_fee', amount_cents: STRIPE_PRICING.dispute, description: 'Dispute fee' }],
    })

    // Another charge, so that there is something to pay out.
    await account.post('/v1/charges', chargeBody({ amount_cents: 10_000 }))
    const payout = await later.payOut(new Date(Date.now() + 3 * DAY))
    await later.reconcile()
    const line = await reportOf(payout)
    expect(line).toMatchObject({ differences: [], fee_differences: [], difference_cents: 0 })
    expect(line?.fees_cents).toBe(stripeFee(5_000) + stripeFee(10_000) + STRIPE_PRICING.dispute)
  })

  /** The reads of a PaymentIntent with its balance transaction expanded, after `since` (a request's index). */
  const fundsReadsOf = (reference: string, since = 0) =>
    processor
      .stripe()
      .requests.slice(since)
      .filter((request) => request.method === 'GET' && request.path === `/v1/payment_intents/${reference}`).length

  /** The next read of the PaymentIntent answers 500, every attempt of it (the SDK retries twice by itself). */
  const failFundsRead = (reference: string) =>
    processor
      .stripe()
      .fault(
        { method: 'GET', path: new RegExp(`^/v1/payment_intents/${reference}$`) },
        { kind: 'error', status: 500 },
        3,
      )

  /** A charge that waits for the customer to authenticate, at `amount_cents`. */
  async function authenticationRequired(account: TestAccount, amountCents: number) {
    const body = chargeBody({
      amount_cents: amountCents,
      source: 'pm_card_authenticationRequired',
      return_url: 'https://shop.example/paid',
    })
    const charge = (await account.post('/v1/charges', body)).json()
    expect(charge.status).toBe('requires_action')
    return charge as { id: string; processor_reference: string; next_action: { url: string } }
  }

  /** The charge's balance transaction is Stripe's, and the payout that carries it agrees. */
  async function expectStripes(
    account: TestAccount,
    charge: { id: string; processor_reference: string },
    cents: number,
  ) {
    expect(await transactionOf(account, charge.id)).toMatchObject({
      amount_cents: cents,
      fee_cents: stripeFee(cents),
      net_cents: cents - stripeFee(cents),
      available_on: stripeTransactionOf(charge.processor_reference).availableOn,
    })
    const payout = await later.payOut(new Date(Date.now() + 3 * DAY))
    await later.reconcile()
    expect(await reportOf(payout)).toMatchObject({ differences: [], fee_differences: [], difference_cents: 0 })
  }

  it('when a payment is decided later (the customer authenticated), then its event is read with what Stripe kept, once, and the payout that carries it agrees', async () => {
    const account = await suite.context.newAccount()
    const charge = await authenticationRequired(account, 2_500)
    const since = processor.stripe().requests.length
    await later.authenticate(charge.next_action.url, true)
    // Told by payment_intent.succeeded, which names no balance transaction: read once, outside the event's
    // transaction; the reconciliation reading the same event again costs no call.
    expect(fundsReadsOf(charge.processor_reference, since)).toBe(1)
    await later.reconcile()
    expect(fundsReadsOf(charge.processor_reference, since)).toBe(1)
    await expectStripes(account, charge, 2_500)
  })

  it('when a charge is captured at once, then its events cost no read of what Stripe kept (the answer carried it)', async () => {
    const account = await suite.context.newAccount()
    const since = processor.stripe().requests.length
    const charge = (await account.post('/v1/charges', chargeBody({ amount_cents: 4_000 }))).json()
    await later.delivered()
    await later.reconcile()
    expect(fundsReadsOf(charge.processor_reference, since)).toBe(0)
    expect((await transactionOf(account, charge.id)).fee_cents).toBe(stripeFee(4_000))
    // Its charge.succeeded names the balance transaction Stripe lists for it (the test server's own fidelity).
    const stripe = processor.stripe()
    const intent = stripe.ledger.paymentIntent(charge.processor_reference)!
    const told = stripe.ledger.events.all.find(
      (event) => event.type === 'charge.succeeded' && (event.data.object as { id: string }).id === intent.latest_charge,
    )
    expect(told, 'its charge.succeeded').toBeDefined()
    expect((told!.data.object as { balance_transaction?: string }).balance_transaction).toBe(
      stripe.ledger.balance.ofPayment(intent)?.id,
    )
  })

  it('when the news of a payment decided later is lost, then the reconciliation reads it from the list of events with what Stripe kept', async () => {
    const account = await suite.context.newAccount()
    const charge = await authenticationRequired(account, 3_300)
    await later.untold.authenticate(charge.processor_reference, true)
    expect((await account.get(`/v1/charges/${charge.id}`)).json().status).toBe('requires_action')
    await later.reconcile()
    expect((await account.get(`/v1/charges/${charge.id}`)).json().status).toBe('succeeded')
    await expectStripes(account, charge, 3_300)
  })

  it('when the news of a capture in Stripe’s dashboard overtakes the answer it follows, then it waits unread, and is read with what Stripe kept when it is applied', async () => {
    const account = await suite.context.newAccount()
    const chargeId = newId('ch')
    const stripe = processor.stripe()
    const dashboard = dashboardOf(stripe)
    // The authorization made for the charge, whose answer the books have not recorded yet; captured in the dashboard.
    const intent = await dashboard.paymentIntents.create({
      amount: 6_000,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      capture_method: 'manual',
      confirm: true,
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
      metadata: { charge_id: chargeId },
    })
    await dashboard.paymentIntents.capture(intent.id)
    await stripe.webhooks.idle()
    const { sql } = suite.context
    const [told] = await sql`
      select status from processor_events where type = 'payment_intent.succeeded' and changes @> ${sql.json([
        { chargeId },
      ] as never)}`
    expect(told?.status).toBe('waiting')
    // The answer recorded: an authorization. The news applied again is read first.
    const input = { amount_cents: 6_000, currency: 'usd' as const, source: 'pm_card_visa', capture: false }
    const outcome = { status: 'succeeded' as const, processorReference: intent.id }
    const expires = new Date(Date.now() + DAY)
    await sql.begin((tx) =>
      recordCharge(
        tx,
        chargeId,
        { id: account.id, processorAccount: null },
        input,
        outcome,
        LATER_SETTINGS.pricing,
        expires,
      ),
    )
    // Stripe not answering the read: it stays waiting for the next run.
    failFundsRead(intent.id)
    await later.delivered()
    expect((await account.get(`/v1/charges/${chargeId}`)).json().status).toBe('requires_capture')
    const since = stripe.requests.length
    await later.delivered()
    expect(fundsReadsOf(intent.id, since)).toBe(1)
    expect((await account.get(`/v1/charges/${chargeId}`)).json().status).toBe('succeeded')
    await expectStripes(account, { id: chargeId, processor_reference: intent.id }, 6_000)
  })

  it('when Stripe does not answer the read of what it kept, then the webhook is refused with 503, nothing is recorded, and its delivery again posts Stripe’s fee', async () => {
    const account = await suite.context.newAccount()
    const charge = await authenticationRequired(account, 4_100)
    const stripe = processor.stripe()
    failFundsRead(charge.processor_reference)
    const since = stripe.webhooks.deliveries.length
    await later.authenticate(charge.next_action.url, true)
    const deliveries = stripe.webhooks.deliveries
      .slice(since)
      .filter((each) => each.type === 'payment_intent.succeeded')
    expect(deliveries.map((each) => each.status)).toEqual([503, 200])
    await expectStripes(account, charge, 4_100)
  })
})
