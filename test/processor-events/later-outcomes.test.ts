// Outcomes that arrive after the answer, with each processor (the simulated one through its own pages and
// controls; Stripe's test server, whose events reach the service as signed webhooks over a real socket): cards
// that need authentication, bank debits that settle later, disputes, refunds that fail or are made at the
// processor, authorizations that lapse there, and news that never arrives but is in the processor's list. Each
// moves the charge forward only, with its event; the key's stored answer stays the first one; and at the end the
// comparison finds the books equal to the processor's.
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { chargeBody, useTestApp } from '../helpers/app.js'
import { laterAt, type LaterAtProcessor } from '../helpers/at-processor.js'
import { PROCESSORS, useProcessor } from '../helpers/processors.js'

const MANDATE = { ip_address: '203.0.113.7', user_agent: 'Mozilla/5.0 (test)' }
const RETURN_URL = 'https://shop.example/orders/1042/paid'

describe.each(PROCESSORS)('outcomes that arrive later, with the $name processor', ({ name }) => {
  const processor = useProcessor(name)
  const suite = useTestApp({ processor: processor.factory })
  let later: LaterAtProcessor
  beforeAll(async () => {
    later = await laterAt(name, suite.context, processor)
  })

  const charge = async (overrides: Record<string, unknown>, key = randomUUID()) => {
    const response = await suite.account.post('/v1/charges', chargeBody(overrides), { key })
    return { response, charge: response.json() }
  }
  const current = async (id: string) => (await suite.account.get(`/v1/charges/${id}`)).json()
  const eventsOf = async (chargeId: string) =>
    (
      await suite.context.sql<{ type: string }[]>`
        select type from events where body::jsonb->'data'->'object'->>'id' = ${chargeId} order by seq`
    ).map((row) => row.type)

  it('when the card asks for authentication and the customer completes it, then the charge is requires_action, then succeeded; the key replays the first answer', async () => {
    const key = randomUUID()
    const body = { source: 'pm_card_authenticationRequired', return_url: RETURN_URL }
    const first = await charge(body, key)
    expect(first.response.statusCode).toBe(201)
    expect(first.charge).toMatchObject({
      status: 'requires_action',
      captured: false,
      amount_captured_cents: 0,
      next_action: {
        type: 'redirect_to_url',
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\//),
        return_url: RETURN_URL,
      },
    })
    await later.authenticate(first.charge.next_action.url, true)
    expect(await current(first.charge.id)).toMatchObject({
      status: 'succeeded',
      captured: true,
      amount_captured_cents: 2500,
      next_action: null,
    })
    expect(await eventsOf(first.charge.id)).toEqual(['charge.requires_action', 'charge.succeeded'])
    const replay = await suite.account.post('/v1/charges', chargeBody(body), { key })
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.body).toBe(first.response.body)
  })

  it('when the customer fails the authentication, or the card declines after it, then the charge fails with the reason', async () => {
    const failed = (await charge({ source: 'pm_card_authenticationRequired', return_url: RETURN_URL })).charge
    await later.authenticate(failed.next_action.url, false)
    expect(await current(failed.id)).toMatchObject({
      status: 'failed',
      failure_code: 'payment_intent_authentication_failure',
      next_action: null,
    })
    expect(await eventsOf(failed.id)).toEqual(['charge.requires_action', 'charge.failed'])

    const declined = (
      await charge({ source: 'pm_card_authenticationRequiredChargeDeclinedInsufficientFunds', return_url: RETURN_URL })
    ).charge
    await later.authenticate(declined.next_action.url, true)
    expect(await current(declined.id)).toMatchObject({ status: 'failed', failure_code: 'insufficient_funds' })
  })

  it('when an authorization needs authentication, then it becomes requires_capture once authenticated, and captures', async () => {
    const held = (await charge({ source: 'pm_card_authenticationRequired', return_url: RETURN_URL, capture: false }))
      .charge
    expect(held).toMatchObject({ status: 'requires_action', authorization_expires_at: null })
    await later.authenticate(held.next_action.url, true)
    expect(await current(held.id)).toMatchObject({
      status: 'requires_capture',
      amount_capturable_cents: 2500,
      authorization_expires_at: expect.any(String),
    })
    const captured = await suite.account.post(`/v1/charges/${held.id}/capture`, { amount_cents: 2000 })
    expect(captured.statusCode).toBe(200)
    expect(captured.json()).toMatchObject({ status: 'succeeded', amount_captured_cents: 2000 })
    expect(await eventsOf(held.id)).toEqual(['charge.requires_action', 'charge.authorized', 'charge.captured'])
  })

  it('when a bank debit is made, then it is processing until it settles: succeeded, or failed with the bank’s reason', async () => {
    const paid = (await charge({ source: 'pm_usBankAccount_success', mandate: MANDATE })).charge
    expect(paid).toMatchObject({ status: 'processing', captured: false, next_action: null })
    await later.settle(paid.processor_reference)
    expect(await current(paid.id)).toMatchObject({ status: 'succeeded', captured: true, amount_captured_cents: 2500 })
    expect(await eventsOf(paid.id)).toEqual(['charge.processing', 'charge.succeeded'])

    const unpaid = (await charge({ source: 'pm_usBankAccount_insufficientFunds', mandate: MANDATE })).charge
    await later.settle(unpaid.processor_reference)
    expect(await current(unpaid.id)).toMatchObject({ status: 'failed', failure_code: 'insufficient_funds' })
  })

  it('when a bank debit comes without the customer’s mandate, then 422 processor-refused names mandate, and nothing is recorded', async () => {
    const { response } = await charge({ source: 'pm_usBankAccount_success' })
    expect(response.statusCode).toBe(422)
    expect(response.json()).toMatchObject({ type: expect.stringMatching(/processor-refused$/), param: 'mandate' })
  })

  it('when the news of a settlement never arrives, then the reconciliation finds it in the processor’s list and applies it', async () => {
    const paid = (await charge({ source: 'pm_usBankAccount_success', mandate: MANDATE })).charge
    await later.settleUntold(paid.processor_reference)
    expect((await current(paid.id)).status).toBe('processing')
    const pulled = await later.reconcile()
    expect(pulled.fresh).toBeGreaterThanOrEqual(1)
    expect(await current(paid.id)).toMatchObject({ status: 'succeeded', captured: true })
    // Read again, nothing is applied twice.
    await later.reconcile()
    expect(await eventsOf(paid.id)).toEqual(['charge.processing', 'charge.succeeded'])
  })

  it('when the customer disputes a charge, then the charge carries the dispute and the amount at risk, until it is decided', async () => {
    const disputed = (await charge({ source: 'pm_card_createDispute' })).charge
    await later.delivered()
    expect((await current(disputed.id)).dispute).toMatchObject({
      status: 'needs_response',
      amount_cents: 2500,
      reason: 'fraudulent',
      processor_reference: expect.any(String),
    })
    await later.closeDispute(disputed.processor_reference, 'lost')
    expect((await current(disputed.id)).dispute).toMatchObject({ status: 'lost', amount_cents: 2500 })
    expect(await eventsOf(disputed.id)).toEqual(['charge.succeeded', 'charge.dispute.created', 'charge.dispute.closed'])
  })

  it('when a refund succeeds and then fails at the processor, then the refund is failed and the charge no longer counts it', async () => {
    const paid = (await charge({ source: 'pm_card_refundFail' })).charge
    const refund = await suite.account.post(`/v1/charges/${paid.id}/refunds`, { amount_cents: 1000 })
    expect(refund.statusCode).toBe(201)
    expect(refund.json()).toMatchObject({ status: 'succeeded', origin: 'api' })
    await later.delivered()
    expect((await suite.account.get(`/v1/refunds/${refund.json().id}`)).json()).toMatchObject({
      status: 'failed',
      failure_reason: 'expired_or_canceled_card',
    })
    expect(await current(paid.id)).toMatchObject({ amount_refunded_cents: 0 })
    expect(await eventsOf(paid.id)).toEqual(['charge.succeeded', 'charge.refunded', 'charge.refund.failed'])
  })

  it('when a refund is made at the processor, then it becomes a refund of the books, marked as the processor’s, and counts against the charge', async () => {
    const paid = (await charge({ source: 'pm_card_visa' })).charge
    await later.refund(paid.processor_reference, 700)
    const refunds = (await suite.account.get(`/v1/charges/${paid.id}/refunds`)).json().data
    expect(refunds).toMatchObject([
      { amount_cents: 700, status: 'succeeded', origin: 'processor', processor_reference: expect.any(String) },
    ])
    expect(await current(paid.id)).toMatchObject({ amount_refunded_cents: 700 })
    // What is left can be refunded through the API, and no more.
    expect((await suite.account.post(`/v1/charges/${paid.id}/refunds`, {})).json()).toMatchObject({
      amount_cents: 1800,
      origin: 'api',
    })
    expect((await suite.account.post(`/v1/charges/${paid.id}/refunds`, {})).json()).toMatchObject({
      status: 422,
      type: expect.stringMatching(/charge-not-refundable$/),
    })
  })

  it('when an authorization lapses at the processor, then the charge expires and can no longer be captured', async () => {
    const held = (await charge({ capture: false })).charge
    await later.expire(held.processor_reference)
    expect(await current(held.id)).toMatchObject({ status: 'expired' })
    expect(await eventsOf(held.id)).toEqual(['charge.authorized', 'charge.expired'])
    expect((await suite.account.post(`/v1/charges/${held.id}/capture`, {})).statusCode).toBe(409)
  })

  it('when everything above has happened, then the comparison finds the books equal to the processor’s, both ways', async () => {
    await later.delivered()
    await later.reconcile()
    const compared = await later.compare()
    const open = await suite.context
      .sql`select kind, reference, detail from reconciliation_discrepancies where resolved_at is null`
    expect(open).toEqual([])
    expect(compared).toMatchObject({ found: 0, open: 0 })
    expect(compared.payments).toBeGreaterThanOrEqual(10)
    const [waiting] = await suite.context
      .sql`select count(*)::int as count from processor_events where status = 'waiting'`
    expect(waiting).toEqual({ count: 0 })
  })
})
