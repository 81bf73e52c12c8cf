// Stripe's own fees (docs/ledger.md, "Fees and availability"): a charge or a capture posts what Stripe kept and the
// day it makes the rest available, from the charge's balance transaction expanded in Stripe's answer, and a dispute
// the fee its event tells (the dispute's balance transactions), whatever the pricing (FEE_*) says. A payment decided
// later (3-D Secure, a bank debit) is told by an event that carries no balance transaction: it posts the pricing's
// fee, and the payout that carries it names the difference.
import { beforeAll, describe, expect, it } from 'vitest'
import { payoutReport } from '../../src/outcomes/payout-report.js'
import { chargeBody, type TestAccount, useTestApp } from '../helpers/app.js'
import { type LaterAtProcessor, laterAt } from '../helpers/later.js'
import { useProcessor } from '../helpers/processors.js'

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

  it('when a payment is decided later (the customer authenticated), then it posts the pricing’s fee, and the payout that carries it names the difference', async () => {
    const account = await suite.context.newAccount()
    const body = chargeBody({ source: 'pm_card_authenticationRequired', return_url: 'https://shop.example/paid' })
    const charge = (await account.post('/v1/charges', body)).json()
    await later.authenticate(charge.next_action.url, true)
    await later.delivered()
    const posted = await transactionOf(account, charge.id)
    expect(posted).toMatchObject({ amount_cents: 2_500, fee_cents: pricingFee(2_500) })

    const payout = await later.payOut(new Date(Date.now() + 3 * DAY))
    await later.reconcile()
    const line = await reportOf(payout)
    expect(line?.fee_differences).toEqual([
      expect.objectContaining({
        id: posted.id,
        detail: expect.stringContaining(`the books' fee is ${pricingFee(2_500)}, the processor's ${stripeFee(2_500)}`),
      }),
    ])
  })
})
