// A dispute's money is booked from what Stripe tells of it, never guessed (docs/ledger.md, "Disputes"): Stripe opens
// a dispute with charge.dispute.created, whose dispute has no balance transaction yet, and withdraws its amount and
// fee with charge.dispute.funds_withdrawn; a won dispute's amount comes back with charge.dispute.funds_reinstated; an
// inquiry moves nothing. Whatever order the events arrive in, twice, or one of them only through the list of events,
// the books post Stripe's withdrawal once, with Stripe's fee, and the payout that carries it reconciles.
import { beforeAll, describe, expect, it } from 'vitest'
import { payoutReport } from '../../src/processor-events/payout-report.js'
import { chargeBody, type TestAccount, useTestApp } from '../helpers/app.js'
import { type LaterAtProcessor, laterAt } from '../helpers/at-processor.js'
import { useProcessor } from '../helpers/processors.js'

const DAY = 86_400_000
// An account's own pricing at Stripe, unlike the service's (its dispute fee is 15.00): what is booked must be Stripe's.
const STRIPE_PRICING = { percent: 0.015, fixed: 25, dispute: 2000 }
const stripeFee = (cents: number) => Math.round(cents * STRIPE_PRICING.percent) + STRIPE_PRICING.fixed
const DISPUTE_EVENTS = /^charge\.dispute\./

const processor = useProcessor('stripe', { cardPricing: STRIPE_PRICING })
const suite = useTestApp({ processor: processor.factory })
let later: LaterAtProcessor
beforeAll(async () => {
  later = await laterAt('stripe', suite.context, processor)
})

interface Posted {
  type: string
  amount_cents: number
  fee_cents: number
  net_cents: number
}

/** The account's balance transactions of the charge's dispute, oldest first, and the account's balance. */
async function disputeBooksOf(account: TestAccount, chargeId: string) {
  const charge = (await account.get(`/v1/charges/${chargeId}`)).json()
  const reference: string | undefined = charge.dispute?.processor_reference
  const listed = reference ? (await account.get(`/v1/balance_transactions?source=${reference}`)).json().data : []
  const posted = (listed as Posted[])
    .map(({ type, amount_cents, fee_cents, net_cents }) => ({ type, amount_cents, fee_cents, net_cents }))
    .reverse()
  return { dispute: charge.dispute?.status as string | undefined, posted }
}

/** A charge of 5000 paid with `source`, whose dispute Stripe opens at once, and its dispute's webhooks held. */
async function disputedCharge(account: TestAccount, source = 'pm_card_createDispute') {
  const charge = (await account.post('/v1/charges', chargeBody({ amount_cents: 5_000, source }))).json()
  expect(charge.status).toBe('succeeded')
  return charge as { id: string; processor_reference: string }
}

const WITHDRAWN = { type: 'dispute', amount_cents: -5_000, fee_cents: 2_000, net_cents: -7_000 }
const REINSTATED = { type: 'dispute_reversal', amount_cents: 5_000, fee_cents: 0, net_cents: 5_000 }

describe('a dispute told by Stripe', () => {
  it('when its events arrive in order, then charge.dispute.created books nothing, and funds_withdrawn books Stripe’s withdrawal and fee, once', async () => {
    const account = await suite.context.newAccount()
    const stripe = processor.stripe()
    stripe.webhooks.fault(/^charge\.dispute\.funds_withdrawn$/, 'hold', 1)
    const charge = await disputedCharge(account)
    await stripe.webhooks.idle()
    expect(await disputeBooksOf(account, charge.id)).toEqual({ dispute: 'needs_response', posted: [] })
    stripe.webhooks.release()
    await stripe.webhooks.idle()
    expect(await disputeBooksOf(account, charge.id)).toEqual({ dispute: 'needs_response', posted: [WITHDRAWN] })
    await later.closeDispute(charge.processor_reference, 'lost')
    await later.delivered()
    expect(await disputeBooksOf(account, charge.id)).toEqual({ dispute: 'lost', posted: [WITHDRAWN] })
  })

  it('when they arrive newest first, then the same books, and the status never moves back', async () => {
    const account = await suite.context.newAccount()
    const stripe = processor.stripe()
    stripe.webhooks.fault(DISPUTE_EVENTS, 'hold', 10)
    const charge = await disputedCharge(account)
    await stripe.webhooks.idle()
    await later.closeDispute(charge.processor_reference, 'lost')
    stripe.webhooks.clearFaults()
    stripe.webhooks.release()
    await stripe.webhooks.idle()
    expect(await disputeBooksOf(account, charge.id)).toEqual({ dispute: 'lost', posted: [WITHDRAWN] })
  })

  it('when every event is delivered twice, then each is applied once', async () => {
    const account = await suite.context.newAccount()
    const stripe = processor.stripe()
    stripe.webhooks.fault(DISPUTE_EVENTS, 'duplicate', 10)
    const charge = await disputedCharge(account)
    await later.delivered()
    await later.closeDispute(charge.processor_reference, 'lost')
    await later.delivered()
    stripe.webhooks.clearFaults()
    expect(await disputeBooksOf(account, charge.id)).toEqual({ dispute: 'lost', posted: [WITHDRAWN] })
  })

  it('when funds_withdrawn is dropped, then nothing is booked until the list of events is read, and then Stripe’s withdrawal', async () => {
    const account = await suite.context.newAccount()
    const stripe = processor.stripe()
    stripe.webhooks.fault(/^charge\.dispute\.funds_withdrawn$/, 'drop', 1)
    const charge = await disputedCharge(account)
    await stripe.webhooks.idle()
    expect(await disputeBooksOf(account, charge.id)).toEqual({ dispute: 'needs_response', posted: [] })
    await later.reconcile()
    expect(await disputeBooksOf(account, charge.id)).toEqual({ dispute: 'needs_response', posted: [WITHDRAWN] })
  })

  it('when it is won, then the books reinstate what Stripe reinstated (the amount; the fee kept), and the payout that carries both reconciles', async () => {
    const account = await suite.context.newAccount()
    const charge = await disputedCharge(account)
    await later.delivered()
    await later.closeDispute(charge.processor_reference, 'won')
    await later.delivered()
    expect(await disputeBooksOf(account, charge.id)).toEqual({ dispute: 'won', posted: [WITHDRAWN, REINSTATED] })
    const balance = (await account.get('/v1/balance')).json()
    expect(balance.pending).toEqual([{ amount_cents: 5_000 - stripeFee(5_000), currency: 'usd' }])
    expect(balance.available).toEqual([{ amount_cents: -STRIPE_PRICING.dispute, currency: 'usd' }])

    // The test server's balance is every test's: a charge large enough that it has something to pay out.
    await account.post('/v1/charges', chargeBody({ amount_cents: 100_000 }))
    const payout = await later.payOut(new Date(Date.now() + 3 * DAY))
    await later.reconcile()
    const line = (await payoutReport(suite.context.sql, new Date(Date.now() - DAY))).find(
      (each) => each.payout === payout,
    )
    expect(line).toMatchObject({ differences: [], fee_differences: [], difference_cents: 0 })
  })

  it('when it is an inquiry, then nothing is booked, opened or closed', async () => {
    const account = await suite.context.newAccount()
    const charge = await disputedCharge(account, 'pm_card_createDisputeInquiry')
    await later.delivered()
    expect(await disputeBooksOf(account, charge.id)).toEqual({ dispute: 'needs_response', posted: [] })
    await later.closeDispute(charge.processor_reference, 'won')
    await later.delivered()
    expect((await disputeBooksOf(account, charge.id)).posted).toEqual([])
    const balance = (await account.get('/v1/balance')).json()
    expect(balance.pending).toEqual([{ amount_cents: 5_000 - stripeFee(5_000), currency: 'usd' }])
  })
})
