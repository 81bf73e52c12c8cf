// Stripe's webhooks into the service, over a real socket: only a delivery signed with the endpoint's secret, over
// the very bytes, within 5 minutes, is applied; each event is applied once however often it arrives, in whatever
// order; one that overtakes the answer it follows waits and is applied later; one about an object the service did
// not make changes nothing. And the comparison reports what disagrees, without changing the books.
import type Stripe from 'stripe'
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { pino } from 'pino'
import { beforeAll, describe, expect, it } from 'vitest'
import { chargeBody, useTestApp } from '../helpers/app.js'
import { laterAt, type LaterAtProcessor } from '../helpers/at-processor.js'
import { useProcessor } from '../helpers/processors.js'
import { compareWithProcessor } from '../../src/processor-events/compare.js'
import { registry } from '../../src/observability/metrics.js'
import { unixNow } from '../helpers/stripe/ids.js'
import { dashboardOf } from '../helpers/stripe/dashboard.js'

const MANDATE = { ip_address: '203.0.113.7', user_agent: 'Mozilla/5.0 (test)' }

const processor = useProcessor('stripe')
const suite = useTestApp({ processor: processor.factory })
let later: LaterAtProcessor
let url: string
beforeAll(async () => {
  later = await laterAt('stripe', suite.context, processor)
  url = `http://127.0.0.1:${(suite.context.app.server.address() as AddressInfo).port}/processor/webhooks`
})

const inbox = async () =>
  (await suite.context.sql<{ count: number }[]>`select count(*)::int as count from processor_events`)[0]!.count
const current = async (id: string) => (await suite.account.get(`/v1/charges/${id}`)).json()
const eventsOf = async (chargeId: string) =>
  (
    await suite.context.sql<
      { type: string }[]
    >`select type from events where body::jsonb->'data'->'object'->>'id' = ${chargeId} order by seq`
  ).map((row) => row.type)
const post = (body: string, signature?: string) =>
  fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(signature === undefined ? {} : { 'stripe-signature': signature }),
    },
    body,
  })

/** A bank debit in processing, and the event of its settlement, built and signed as Stripe would send it. */
async function settlementEvent(): Promise<{ chargeId: string; event: Stripe.Event; body: string }> {
  const stripe = processor.stripe()
  stripe.webhooks.fault(/^payment_intent\.succeeded$/, 'drop', 1)
  const charge = (
    await suite.account.post('/v1/charges', chargeBody({ source: 'pm_usBankAccount_success', mandate: MANDATE }))
  ).json()
  stripe.later.settle(charge.processor_reference)
  await stripe.webhooks.idle()
  const event = stripe.ledger.events.all.filter((each) => each.type === 'payment_intent.succeeded').at(-1)!
  return { chargeId: charge.id, event, body: JSON.stringify(event) }
}

describe('POST /processor/webhooks: only what Stripe signed', () => {
  it.each([
    ['no signature', (body: string) => post(body)],
    [
      'a signature with another secret',
      (body: string) => post(body, processor.stripe().webhooks.sign(body, unixNow(), 'whsec_not_the_endpoints')),
    ],
    [
      'a body changed after signing',
      (body: string) => post(body.replace('"succeeded"', '"canceled"'), processor.stripe().webhooks.sign(body)),
    ],
    [
      'a signature older than 5 minutes (a replay)',
      (body: string) => post(body, processor.stripe().webhooks.sign(body, unixNow() - 600)),
    ],
  ])(
    'when a delivery comes with %s, then 400 webhook-signature-invalid, and nothing is applied or recorded',
    async (_what, send) => {
      const { chargeId, body } = await settlementEvent()
      const before = await inbox()
      const response = await send(body)
      expect(response.status).toBe(400)
      expect(response.headers.get('content-type')).toBe('application/problem+json; charset=utf-8')
      expect(await response.json()).toMatchObject({ type: expect.stringMatching(/webhook-signature-invalid$/) })
      expect(await inbox()).toBe(before)
      expect((await current(chargeId)).status).toBe('processing')
    },
  )

  it('when it is signed by the endpoint’s secret, then 200 applied; delivered again (a retry, a replay signed anew), 200 duplicate, applied once', async () => {
    const { chargeId, event, body } = await settlementEvent()
    const first = await post(body, processor.stripe().webhooks.sign(body))
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ received: true, status: 'applied' })
    expect((await current(chargeId)).status).toBe('succeeded')
    const again = await processor.stripe().webhooks.resend(event)
    expect(again).toBe(200)
    const [row] = await suite.context.sql`select status, received_via from processor_events where id = ${event.id}`
    expect(row).toEqual({ status: 'applied', received_via: 'webhook' })
    expect(await eventsOf(chargeId)).toEqual(['charge.processing', 'charge.succeeded'])
  })

  it('when Stripe delivers every event twice, then each is applied once', async () => {
    const stripe = processor.stripe()
    stripe.webhooks.fault(/./, 'duplicate', 20)
    const charge = (await suite.account.post('/v1/charges', chargeBody({ source: 'pm_card_createDispute' }))).json()
    await later.delivered()
    await later.closeDispute(charge.processor_reference, 'won')
    stripe.webhooks.clearFaults()
    expect((await current(charge.id)).dispute).toMatchObject({ status: 'won' })
    expect(await eventsOf(charge.id)).toEqual(['charge.succeeded', 'charge.dispute.created', 'charge.dispute.closed'])
    const delivered = stripe.webhooks.deliveries
      .filter((delivery) => delivery.type === 'charge.dispute.closed')
      .slice(-2)
    expect(delivered.map((delivery) => delivery.status)).toEqual([200, 200])
  })

  it('when events arrive newest first, then each object ends where the newest says, and nothing moves back', async () => {
    const stripe = processor.stripe()
    const paid = (await suite.account.post('/v1/charges', chargeBody({ source: 'pm_card_refundFail' }))).json()
    await later.delivered()
    stripe.webhooks.fault(/^(refund|charge)\./, 'hold', 20)
    const refund = (await suite.account.post(`/v1/charges/${paid.id}/refunds`, { amount_cents: 500 })).json()
    await new Promise((resolve) => setImmediate(resolve))
    stripe.webhooks.clearFaults()
    stripe.webhooks.release()
    await later.delivered()
    expect((await suite.account.get(`/v1/refunds/${refund.id}`)).json()).toMatchObject({ status: 'failed' })
    expect(await current(paid.id)).toMatchObject({ amount_refunded_cents: 0 })
    expect(await eventsOf(paid.id)).toEqual(['charge.succeeded', 'charge.refunded', 'charge.refund.failed'])
  })

  it('when charge.refunded and refund.created of one dashboard refund arrive at the same instant, then both answer 200 and the refund is recorded once (8 refunds)', async () => {
    const stripe = processor.stripe()
    const paid = (await suite.account.post('/v1/charges', chargeBody({ amount_cents: 8000 }))).json()
    await later.delivered()
    for (let round = 1; round <= 8; round++) {
      stripe.webhooks.fault(/^(charge\.refunded|refund\.created)$/, 'hold', 2)
      stripe.later.refundFromDashboard(paid.processor_reference, 300)
      const from = stripe.webhooks.deliveries.length
      stripe.webhooks.release()
      await later.delivered()
      expect(
        stripe.webhooks.deliveries
          .slice(from)
          .map((delivery) => [delivery.type, delivery.status])
          .sort(),
      ).toEqual([
        ['charge.refunded', 200],
        ['refund.created', 200],
      ])
      const refunds = (await suite.account.get(`/v1/charges/${paid.id}/refunds`)).json().data
      expect(refunds).toHaveLength(round)
      expect(await current(paid.id)).toMatchObject({ amount_refunded_cents: 300 * round })
    }
    expect((await eventsOf(paid.id)).filter((type) => type === 'charge.refunded')).toHaveLength(8)
  })

  it('when an event overtakes the answer it follows, then it waits, and is applied once the charge is recorded', async () => {
    const stripe = processor.stripe()
    // Stripe acts, sends its webhook, and only then answers the service.
    stripe.fault({ method: 'POST', path: /^\/v1\/payment_intents$/ }, { kind: 'delay', ms: 300, when: 'after' })
    const charge = (
      await suite.account.post('/v1/charges', chargeBody({ source: 'pm_usBankAccount_success', mandate: MANDATE }))
    ).json()
    await stripe.webhooks.idle()
    const [waiting] = await suite.context.sql`
      select status, note from processor_events where type = 'payment_intent.processing' and changes->0->>'chargeId' =
        ${charge.id}`
    expect(waiting).toEqual({ status: 'waiting', note: expect.stringContaining('is not recorded yet') })
    await later.reconcile()
    const [settled] = await suite.context.sql`
      select status from processor_events where type = 'payment_intent.processing' and changes->0->>'chargeId' =
        ${charge.id}`
    expect(settled).toEqual({ status: 'ignored' })
    expect(await eventsOf(charge.id)).toEqual(['charge.processing'])
  })

  it('when an event is about a payment the service did not make, then it is recorded as ignored, and changes nothing', async () => {
    const stripe = processor.stripe()
    const client = dashboardOf(stripe)
    const before = await suite.context.sql`select count(*)::int as count from events`
    const outside = await client.paymentIntents.create({
      amount: 900,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    })
    await stripe.webhooks.idle()
    const [row] = await suite.context
      .sql`select status, note from processor_events where type = 'payment_intent.succeeded' and id =
        ${stripe.ledger.events.all.at(-1)!.id}`
    expect(row).toMatchObject({ status: 'ignored', note: expect.stringContaining('nothing for the books') })
    expect(outside.status).toBe('succeeded')
    expect(await suite.context.sql`select count(*)::int as count from events`).toEqual(before)
  })
})

describe('the comparison with Stripe', () => {
  it('when the books and Stripe disagree, both ways, then each disagreement is reported (row, metric, log), and the books are left as they are', async () => {
    const stripe = processor.stripe()
    const paid = (await suite.account.post('/v1/charges', chargeBody({ amount_cents: 4200 }))).json()
    // The books are changed behind the service's back; and Stripe has a payment made for a charge the books never got.
    await suite.context.sql`update charges set amount_captured_cents = 4000 where id = ${paid.id}`
    const client = dashboardOf(stripe)
    const stray = await client.paymentIntents.create({
      amount: 3100,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
      metadata: { charge_id: 'ch_0123456789abcdef01234567', operation_id: randomUUID(), account_id: suite.account.id },
    })
    await stripe.webhooks.idle()
    await later.reconcile()
    const lines: string[] = []
    const log = pino({ level: 'error' }, { write: (line: string) => void lines.push(line) })
    const compared = await compareWithProcessor(suite.context.sql, suite.context.processor.later, log, {
      settleMarginMs: 0,
    })
    const open = await suite.context.sql<{ kind: string; reference: string }[]>`
      select kind, reference from reconciliation_discrepancies where resolved_at is null order by id`
    expect(open).toEqual(
      expect.arrayContaining([
        { kind: 'payment_differs', reference: paid.id },
        { kind: 'payment_not_in_books', reference: stray.id },
      ]),
    )
    expect(compared.found).toBeGreaterThanOrEqual(2)
    expect(lines.join('')).toContain(`(payment_differs, ${paid.id}): the books say 4000 captured, the processor 4200`)
    expect((await registry.getSingleMetricAsString('reconciliation_discrepancies_open')).split('\n').at(-1)).toMatch(
      / [1-9]\d*$/,
    )
    expect(await current(paid.id)).toMatchObject({ amount_captured_cents: 4000 })

    // Put right (here, by hand), the next comparison marks it resolved.
    await suite.context.sql`update charges set amount_captured_cents = 4200 where id = ${paid.id}`
    await compareWithProcessor(suite.context.sql, suite.context.processor.later, log, { settleMarginMs: 0 })
    const [resolved] = await suite.context
      .sql`select resolved_at from reconciliation_discrepancies where kind = 'payment_differs' and reference =
        ${paid.id}`
    expect(resolved!.resolved_at).toBeInstanceOf(Date)
  })
})
