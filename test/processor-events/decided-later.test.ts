// Captures, voids and refunds that the processor answers "received" and decides later (Adyen's modifications; the
// simulated processor's pm_card_decidedLater): the charge waits in capture_pending or void_pending, the refund is
// pending with its amount reserved, answered 202, with nothing posted; the processor's news decides it, once,
// however often and in whatever order it comes; a refusal gives the authorization (or the reservation) back; and a
// decision whose news never comes is a discrepancy until it does.
import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { beforeAll, describe, expect, it } from 'vitest'
import { expireAuthorizations } from '../../src/charges/expire-authorizations.js'
import { acceptEvent } from '../../src/processor-events/inbox.js'
import type { ProcessorEvent } from '../../src/processor/later-outcomes.js'
import { simulatedControlsOf } from '../../src/processor/simulated.js'
import { chargeBody, controllableProcessor, useTestApp } from '../helpers/app.js'
import { LATER_SETTINGS, laterAt, type LaterAtProcessor } from '../helpers/at-processor.js'
import { useProcessor } from '../helpers/processors.js'

const processor = useProcessor('simulated')
const controlled = controllableProcessor(processor.factory)
const suite = useTestApp({ processor: controlled.factory })
let later: LaterAtProcessor
beforeAll(async () => {
  later = await laterAt('simulated', suite.context, processor)
})

const authorize = async () =>
  (await suite.account.post('/v1/charges', chargeBody({ source: 'pm_card_decidedLater', capture: false }))).json()
const current = async (id: string) => (await suite.account.get(`/v1/charges/${id}`)).json()
const eventsOf = async (chargeId: string) =>
  (
    await suite.context.sql<{ type: string }[]>`
      select type from events where body::jsonb->'data'->'object'->>'id' = ${chargeId} order by seq`
  ).map((row) => row.type)
const postingsOf = async (chargeId: string) =>
  suite.context.sql<{ type: string; amount_cents: number }[]>`
    select type, amount_cents::int from ledger_transactions where account_id = ${suite.account.id} and
      source = ${chargeId} order by seq`
/** The simulated processor's decision, delivered as its webhook would be; the event, to deliver it again. */
const decide = async (reference: string, result: 'performed' | 'refused'): Promise<ProcessorEvent> => {
  const event = await simulatedControlsOf(suite.context.processor)!.decide(reference, result === 'performed')
  await acceptEvent(suite.context.sql, event, 'webhook', LATER_SETTINGS)
  return event
}

describe('a capture decided later', () => {
  it('when the processor receives a capture, then the answer is 202 capture_pending, nothing is posted, and a second capture waits for it', async () => {
    const charge = await authorize()
    const key = randomUUID()
    const capture = await suite.account.post(`/v1/charges/${charge.id}/capture`, { amount_cents: 1500 }, { key })
    expect(capture.statusCode).toBe(202)
    expect(capture.json()).toMatchObject({ status: 'capture_pending', captured: false, amount_captured_cents: 0 })
    expect(await postingsOf(charge.id)).toEqual([])
    expect(await eventsOf(charge.id)).toEqual(['charge.authorized', 'charge.capture_pending'])

    const replay = await suite.account.post(`/v1/charges/${charge.id}/capture`, { amount_cents: 1500 }, { key })
    expect([replay.statusCode, replay.headers['idempotent-replayed'], replay.body]).toEqual([202, 'true', capture.body])
    const another = await suite.account.post(`/v1/charges/${charge.id}/capture`, {})
    expect([another.statusCode, another.json().type]).toEqual([
      409,
      expect.stringContaining('charge-operation-in-progress'),
    ])
    const voiding = await suite.account.post(`/v1/charges/${charge.id}/void`, {})
    expect(voiding.statusCode).toBe(409)
  })

  it('when the processor performs it, then the charge is captured for what was asked, posted once, however often the news comes', async () => {
    const charge = await authorize()
    await suite.account.post(`/v1/charges/${charge.id}/capture`, { amount_cents: 1500 })
    const event = await decide(charge.processor_reference, 'performed')
    await acceptEvent(suite.context.sql, { ...event, id: `${event.id}_again` }, 'webhook', LATER_SETTINGS)
    await acceptEvent(suite.context.sql, event, 'webhook', LATER_SETTINGS)
    expect(await current(charge.id)).toMatchObject({ status: 'succeeded', captured: true, amount_captured_cents: 1500 })
    expect(await eventsOf(charge.id)).toEqual(['charge.authorized', 'charge.capture_pending', 'charge.captured'])
    expect(await postingsOf(charge.id)).toEqual([{ type: 'charge', amount_cents: 1500 }])
    const [row] = await suite.context.sql`select pending_operation from charges where id = ${charge.id}`
    expect(row).toEqual({ pending_operation: null })
    expect((await later.compare()).open).toBe(0)
  })

  it('when the processor refuses it, then the authorization is back, told by charge.capture_failed, and a new capture can be made', async () => {
    const charge = await authorize()
    await suite.account.post(`/v1/charges/${charge.id}/capture`, {})
    await decide(charge.processor_reference, 'refused')
    expect(await current(charge.id)).toMatchObject({ status: 'requires_capture', captured: false })
    expect(await eventsOf(charge.id)).toEqual(['charge.authorized', 'charge.capture_pending', 'charge.capture_failed'])
    expect(await postingsOf(charge.id)).toEqual([])

    const again = await suite.account.post(`/v1/charges/${charge.id}/capture`, {})
    expect([again.statusCode, again.json().status], again.body).toEqual([202, 'capture_pending'])
    await decide(charge.processor_reference, 'performed')
    expect(await current(charge.id)).toMatchObject({ status: 'succeeded', amount_captured_cents: 2500 })
    expect(await postingsOf(charge.id)).toEqual([{ type: 'charge', amount_cents: 2500 }])
  })

  it('when older news of the payment arrives while the capture waits, then it changes nothing', async () => {
    const charge = await authorize()
    await suite.account.post(`/v1/charges/${charge.id}/capture`, {})
    const stale: ProcessorEvent = {
      id: `sim_evt_${randomUUID()}`,
      type: 'payment.authorized',
      createdAt: new Date(),
      changes: [
        {
          object: 'payment',
          reference: charge.processor_reference,
          chargeId: charge.id,
          status: 'requires_capture',
          amountCents: 2500,
          amountCapturedCents: 0,
        },
      ],
    }
    await acceptEvent(suite.context.sql, stale, 'webhook', LATER_SETTINGS)
    expect((await current(charge.id)).status).toBe('capture_pending')
  })
})

describe('news that overtakes the answer it follows', () => {
  it('when the decision is delivered before the capture’s answer is recorded, then it waits, and applies once the charge waits for it', async () => {
    for (const result of ['performed', 'refused'] as const) {
      const charge = await authorize()
      const key = randomUUID()
      // The answer is lost: the capture is received at the processor, and the charge still has it pending.
      controlled.loseNextAnswer()
      const lost = await suite.account.post(`/v1/charges/${charge.id}/capture`, {}, { key })
      expect(lost.statusCode).toBe(503)
      const event = await simulatedControlsOf(suite.context.processor)!.decide(
        charge.processor_reference,
        result === 'performed',
      )
      expect(await acceptEvent(suite.context.sql, event, 'webhook', LATER_SETTINGS)).toBe('waiting')
      expect((await current(charge.id)).status).toBe('requires_capture')
      // The client's retry records the capture as waiting; the news waiting in the inbox then applies.
      const retry = await suite.account.post(`/v1/charges/${charge.id}/capture`, {}, { key })
      expect([retry.statusCode, retry.json().status]).toEqual([202, 'capture_pending'])
      await later.reconcile()
      expect((await current(charge.id)).status).toBe(result === 'performed' ? 'succeeded' : 'requires_capture')
    }
  })
})

describe('a void decided later', () => {
  it('when the processor receives a void, then 202 void_pending; performed, the charge is voided; refused, it is authorized again', async () => {
    const voided = await authorize()
    const answer = await suite.account.post(`/v1/charges/${voided.id}/void`, {})
    expect([answer.statusCode, answer.json().status]).toEqual([202, 'void_pending'])
    await decide(voided.processor_reference, 'performed')
    expect((await current(voided.id)).status).toBe('voided')
    expect(await eventsOf(voided.id)).toEqual(['charge.authorized', 'charge.void_pending', 'charge.voided'])

    const kept = await authorize()
    await suite.account.post(`/v1/charges/${kept.id}/void`, {})
    await decide(kept.processor_reference, 'refused')
    expect((await current(kept.id)).status).toBe('requires_capture')
    expect(await eventsOf(kept.id)).toEqual(['charge.authorized', 'charge.void_pending', 'charge.void_failed'])
  })
})

describe('a refund decided later', () => {
  const refundPostings = async (refundId: string) =>
    suite.context.sql<{ type: string; amount_cents: number }[]>`
      select type, amount_cents::int from ledger_transactions where account_id = ${suite.account.id} and
        source = ${refundId} order by seq`
  const refundedOf = async (chargeId: string) => {
    const [row] = await suite.context.sql<{ refunded: number; pending: number }[]>`
      select amount_refunded_cents::int as refunded, amount_refund_pending_cents::int as pending from charges
      where id = ${chargeId}`
    return row
  }
  const charged = async () =>
    (await suite.account.post('/v1/charges', chargeBody({ source: 'pm_card_decidedLater' }))).json()

  it('when the processor receives a refund, then 202 pending with its amount reserved; performed, it is refunded and posted once; refused, the reservation is given back', async () => {
    const charge = await charged()
    const key = randomUUID()
    const answer = await suite.account.post(`/v1/charges/${charge.id}/refunds`, { amount_cents: 1000 }, { key })
    expect([answer.statusCode, answer.json().status, answer.headers.location]).toEqual([
      202,
      'pending',
      `/v1/refunds/${answer.json().id}`,
    ])
    const refund = answer.json()
    expect(await refundedOf(charge.id)).toEqual({ refunded: 0, pending: 1000 })
    expect(await refundPostings(refund.id)).toEqual([])
    const replay = await suite.account.post(`/v1/charges/${charge.id}/refunds`, { amount_cents: 1000 }, { key })
    expect([replay.statusCode, replay.body]).toEqual([202, answer.body])

    const event = await decide(charge.processor_reference, 'performed')
    await acceptEvent(suite.context.sql, { ...event, id: `${event.id}_again` }, 'webhook', LATER_SETTINGS)
    expect((await suite.account.get(`/v1/refunds/${refund.id}`)).json().status).toBe('succeeded')
    expect(await refundedOf(charge.id)).toEqual({ refunded: 1000, pending: 0 })
    expect(await refundPostings(refund.id)).toEqual([{ type: 'refund', amount_cents: -1000 }])

    const refused = (await suite.account.post(`/v1/charges/${charge.id}/refunds`, { amount_cents: 1500 })).json()
    await decide(charge.processor_reference, 'refused')
    expect((await suite.account.get(`/v1/refunds/${refused.id}`)).json()).toMatchObject({
      status: 'failed',
      failure_reason: 'refused',
    })
    expect(await refundedOf(charge.id)).toEqual({ refunded: 1000, pending: 0 })
    expect(await refundPostings(refused.id)).toEqual([])
    expect(await eventsOf(charge.id)).toEqual([
      'charge.succeeded',
      'charge.refund.pending',
      'charge.refunded',
      'charge.refund.pending',
      'charge.refund.failed',
    ])
    expect((await later.compare()).open).toBe(0)
  })
})

describe('the comparison', () => {
  it('when a decision is made at the processor and its news never comes, then the comparison names the charge and the refund', async () => {
    const controls = simulatedControlsOf(suite.context.processor)!
    const authorized = await authorize()
    await suite.account.post(`/v1/charges/${authorized.id}/capture`, {})
    const charged = (await suite.account.post('/v1/charges', chargeBody({ source: 'pm_card_decidedLater' }))).json()
    const refund = (await suite.account.post(`/v1/charges/${charged.id}/refunds`, { amount_cents: 700 })).json()
    expect((await later.compare()).open).toBe(0)

    const captured = await controls.decide(authorized.processor_reference, true)
    const refunded = await controls.decide(charged.processor_reference, true)
    await later.compare()
    const open = await suite.context.sql<{ kind: string; reference: string }[]>`
      select kind, reference from reconciliation_discrepancies where resolved_at is null and reference in
        (${authorized.id}, ${refund.id}) order by kind`
    expect(open).toEqual([
      { kind: 'payment_differs', reference: authorized.id },
      { kind: 'refund_differs', reference: refund.id },
    ])
    for (const event of [captured, refunded]) await acceptEvent(suite.context.sql, event, 'webhook', LATER_SETTINGS)
    expect((await later.compare()).open).toBe(0)
  })
})

describe('the control', () => {
  it('when nothing awaits a decision, then the control says so with 409', async () => {
    const charge = await authorize()
    const response = await suite.context.app.inject({
      method: 'POST',
      url: `/simulated-processor/payments/${charge.processor_reference}/decide`,
      payload: {},
    })
    expect(response.statusCode).toBe(409)
  })
})

describe('the expiry worker’s void, decided later', () => {
  it('when the expiry’s void is received and then performed, then the authorization ends expired, not voided', async () => {
    const shop = await suite.context.newAccount()
    const charge = (
      await shop.post('/v1/charges', chargeBody({ source: 'pm_card_decidedLater', capture: false }))
    ).json()
    const pastExpiry = new Date(Date.now() + (suite.context.chargeSettings.authorizationExpiresDays + 1) * 86_400_000)
    const options = { batchSize: 10, leaseSeconds: 60, accountId: shop.id, at: pastExpiry }
    await expireAuthorizations(suite.context.sql, suite.context.processor, options, pino({ level: 'silent' }))
    expect((await shop.get(`/v1/charges/${charge.id}`)).json().status).toBe('void_pending')
    await decide(charge.processor_reference, 'performed')
    expect((await shop.get(`/v1/charges/${charge.id}`)).json().status).toBe('expired')
    expect(await eventsOf(charge.id)).toEqual(['charge.authorized', 'charge.void_pending', 'charge.expired'])
  })
})
