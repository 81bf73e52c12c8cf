import { describe, expect, it } from 'vitest'
import { chargeBody, controllableProcessor, useTestApp, type TestAccount } from '../helpers/app.js'
import { recoverNow } from '../helpers/tasks.js'
import { PROCESSORS, useProcessor } from '../helpers/processors.js'

describe.each(PROCESSORS)('with the $name processor', ({ name }) => {
  const under = useProcessor(name)
  const processor = controllableProcessor(under.factory)
  const suite = useTestApp({ processor: processor.factory })

  async function authorize(amountCents = 1000, user: TestAccount = suite.account): Promise<string> {
    const response = await user.post('/v1/charges', chargeBody({ amount_cents: amountCents, capture: false }))
    expect(response.statusCode).toBe(201)
    return response.json().id
  }

  /** What the processor did to this charge's authorization, from its own ledger. */
  const processorOperations = (chargeId: string) => under.operationsOn(suite.context.sql, chargeId)

  /** One run of the recovery worker, with no grace period: every claim whose lease ended is settled. */
  const recover = () => recoverNow(suite.context)

  async function eventTypes(chargeId: string): Promise<string[]> {
    const rows = await suite.context.sql<{ type: string }[]>`
      select type from events where body::jsonb->'data'->'object'->>'id' = ${chargeId} order by seq`
    return rows.map((row) => row.type)
  }

  describe('POST /v1/charges with capture: false', () => {
    it('when a charge is only authorized, then it awaits capture, holds for 7 days, and cannot be refunded yet', async () => {
      const response = await suite.account.post('/v1/charges', chargeBody({ amount_cents: 1000, capture: false }))
      expect(response.statusCode).toBe(201)
      const charge = response.json()
      expect(charge).toMatchObject({
        status: 'requires_capture',
        captured: false,
        amount_cents: 1000,
        amount_capturable_cents: 1000,
        amount_captured_cents: 0,
        amount_refunded_cents: 0,
      })
      const holdsFor = Date.parse(charge.authorization_expires_at) - Date.parse(charge.created_at)
      expect(Math.round(holdsFor / 86_400_000)).toBe(7)
      expect(processor.calls.at(-1)?.operation).toBe('authorize')

      const refund = await suite.account.post(`/v1/charges/${charge.id}/refunds`, {})
      expect(refund.statusCode).toBe(422)
      expect(refund.json().type).toMatch(/\/charge-not-refundable$/)
      expect(await eventTypes(charge.id)).toEqual(['charge.authorized'])
    })

    it('when a charge is captured at once, then it has no authorization to expire', async () => {
      const charge = (await suite.account.post('/v1/charges', chargeBody({ amount_cents: 700 }))).json()
      expect(charge).toMatchObject({
        status: 'succeeded',
        captured: true,
        amount_captured_cents: 700,
        amount_capturable_cents: 0,
        authorization_expires_at: null,
      })
    })

    it('when an authorization is declined, then it is a 402 like a declined charge', async () => {
      const response = await suite.account.post(
        '/v1/charges',
        chargeBody({ source: 'pm_card_chargeDeclined', capture: false }),
      )
      expect(response.statusCode).toBe(402)
      const charge = (await suite.account.get(`/v1/charges/${response.json().charge}`)).json()
      expect(charge).toMatchObject({ status: 'failed', captured: false, authorization_expires_at: null })
    })
  })

  describe('POST /v1/charges/:id/capture', () => {
    it('when captured in full, then the charge succeeds and all of it can be refunded', async () => {
      const chargeId = await authorize(1000)
      const captured = await suite.account.post(`/v1/charges/${chargeId}/capture`, {})
      expect(captured.statusCode).toBe(200)
      expect(captured.json()).toMatchObject({
        id: chargeId,
        status: 'succeeded',
        captured: true,
        amount_captured_cents: 1000,
        amount_capturable_cents: 0,
      })
      expect((await suite.account.get(`/v1/charges/${chargeId}`)).json()).toEqual(captured.json())

      expect((await suite.account.post(`/v1/charges/${chargeId}/refunds`, {})).json()).toMatchObject({
        amount_cents: 1000,
      })
      expect(await processorOperations(chargeId)).toEqual({ capture: 1, refund: 1 })
      expect(await eventTypes(chargeId)).toEqual(['charge.authorized', 'charge.captured', 'charge.refunded'])
    })

    it('when captured in part, then the rest is released and refunds stop at what was captured', async () => {
      const chargeId = await authorize(1000)
      const captured = await suite.account.post(`/v1/charges/${chargeId}/capture`, { amount_cents: 600 })
      expect(captured.json()).toMatchObject({
        status: 'succeeded',
        amount_cents: 1000,
        amount_captured_cents: 600,
        amount_capturable_cents: 0,
      })

      const tooMuch = await suite.account.post(`/v1/charges/${chargeId}/refunds`, { amount_cents: 601 })
      expect(tooMuch.statusCode).toBe(422)
      expect(tooMuch.json()).toMatchObject({ amount_refundable_cents: 600 })
      expect((await suite.account.post(`/v1/charges/${chargeId}/refunds`, { amount_cents: 250 })).statusCode).toBe(201)
      expect((await suite.account.post(`/v1/charges/${chargeId}/refunds`, {})).json()).toMatchObject({
        amount_cents: 350,
      })
      const [row] = await suite.context
        .sql`select amount_captured_cents, amount_refunded_cents from charges where id = ${chargeId}`
      expect(row).toEqual({ amount_captured_cents: 600, amount_refunded_cents: 600 })
    })

    it('when a capture is retried with its key, then the first answer is replayed byte for byte and the processor captured once', async () => {
      const chargeId = await authorize()
      const first = await suite.account.post(
        `/v1/charges/${chargeId}/capture`,
        { amount_cents: 800 },
        { key: 'capture-once' },
      )
      const retry = await suite.account.post(
        `/v1/charges/${chargeId}/capture`,
        { amount_cents: 800 },
        { key: 'capture-once' },
      )
      expect(retry.statusCode).toBe(200)
      expect(retry.headers['idempotent-replayed']).toBe('true')
      expect(retry.rawPayload.equals(first.rawPayload)).toBe(true)
      expect(await processorOperations(chargeId)).toEqual({ capture: 1 })
    })

    it('when a captured charge is captured again with a new key, then 409 charge-not-capturable, distinct from the idempotency errors', async () => {
      const chargeId = await authorize()
      await suite.account.post(`/v1/charges/${chargeId}/capture`, {})
      const again = await suite.account.post(`/v1/charges/${chargeId}/capture`, {})
      expect(again.statusCode).toBe(409)
      expect(again.json()).toMatchObject({
        type: expect.stringMatching(/\/charge-not-capturable$/),
        charge_status: 'succeeded',
      })
      expect(await processorOperations(chargeId)).toEqual({ capture: 1 })
    })

    it('when the capture exceeds the authorization, then 422 and the key may carry a corrected amount', async () => {
      const chargeId = await authorize(1000)
      const tooMuch = await suite.account.post(
        `/v1/charges/${chargeId}/capture`,
        { amount_cents: 1001 },
        { key: 'capture-fix' },
      )
      expect(tooMuch.statusCode).toBe(422)
      expect(tooMuch.json()).toMatchObject({
        type: expect.stringMatching(/\/capture-exceeds-authorization$/),
        amount_capturable_cents: 1000,
      })
      const corrected = await suite.account.post(
        `/v1/charges/${chargeId}/capture`,
        { amount_cents: 1000 },
        { key: 'capture-fix' },
      )
      expect(corrected.statusCode).toBe(200)
    })

    it('when a charge captured at once, a declined one, or another account’s is captured, then nothing is captured', async () => {
      const direct = (await suite.account.post('/v1/charges', chargeBody())).json().id
      const declined = (
        await suite.account.post('/v1/charges', chargeBody({ source: 'pm_card_chargeDeclined', capture: false }))
      ).json().charge
      const theirs = await authorize(1000, await suite.context.newAccount('Other'))

      expect((await suite.account.post(`/v1/charges/${direct}/capture`, {})).json().charge_status).toBe('succeeded')
      expect((await suite.account.post(`/v1/charges/${declined}/capture`, {})).json().charge_status).toBe('failed')
      const foreign = await suite.account.post(`/v1/charges/${theirs}/capture`, {})
      expect(foreign.statusCode).toBe(404)
      expect(await processorOperations(theirs)).toEqual({})
    })

    it('when 20 captures with 20 different keys race, then exactly one captures and the others are refused', async () => {
      const chargeId = await authorize(1000)
      const release = processor.holdNext()
      const captures = Array.from({ length: 20 }, () => suite.account.post(`/v1/charges/${chargeId}/capture`, {}))
      // Only the capture that reserved the charge reaches the processor, and it is held there until the rest answered.
      const settled = Promise.all(captures)
      await new Promise((resolve) => setTimeout(resolve, 200))
      release()
      const responses = await settled

      expect(responses.filter((response) => response.statusCode === 200)).toHaveLength(1)
      for (const refused of responses.filter((response) => response.statusCode !== 200)) {
        expect(refused.statusCode).toBe(409)
        expect(refused.json().type).toMatch(/\/(charge-operation-in-progress|charge-not-capturable)$/)
      }
      expect(await processorOperations(chargeId)).toEqual({ capture: 1 })
      expect(await eventTypes(chargeId)).toEqual(['charge.authorized', 'charge.captured'])
    })

    it('when the capture’s answer is lost, then the retry with the same key captures once, and a new key waits its turn', async () => {
      const chargeId = await authorize(1000)
      processor.loseNextAnswer()
      const lost = await suite.account.post(
        `/v1/charges/${chargeId}/capture`,
        { amount_cents: 900 },
        { key: 'capture-lost' },
      )
      expect(lost.statusCode).toBe(503)
      const other = await suite.account.post(`/v1/charges/${chargeId}/void`, {})
      expect(other.statusCode).toBe(409)
      expect(other.json().type).toMatch(/\/charge-operation-in-progress$/)

      const retry = await suite.account.post(
        `/v1/charges/${chargeId}/capture`,
        { amount_cents: 900 },
        { key: 'capture-lost' },
      )
      expect(retry.statusCode).toBe(200)
      expect(retry.json()).toMatchObject({ amount_captured_cents: 900 })
      expect(await processorOperations(chargeId)).toEqual({ capture: 1 })
    })

    it('when the capture timed out at the processor, then the charge waits for its outcome; once the processor says it never saw it, the charge is free', async () => {
      const chargeId = await authorize(1000)
      processor.timeOutNext()
      expect(
        (await suite.account.post(`/v1/charges/${chargeId}/capture`, {}, { key: 'capture-unseen' })).statusCode,
      ).toBe(503)
      // Whether the capture happened is not known yet: another capture must wait for it.
      expect((await suite.account.post(`/v1/charges/${chargeId}/capture`, {})).json().type).toMatch(
        /\/charge-operation-in-progress$/,
      )

      expect(await recover()).toEqual({ settled: 0, released: 1, failed: 0 })
      const withNewKey = await suite.account.post(`/v1/charges/${chargeId}/capture`, {})
      expect(withNewKey.statusCode).toBe(200)
      expect(await processorOperations(chargeId)).toEqual({ capture: 1 })
    })

    it('when the capture’s answer is lost and nobody retries, then the recovery worker records the capture the processor made', async () => {
      const chargeId = await authorize(1000)
      processor.loseNextAnswer()
      expect(
        (
          await suite.account.post(
            `/v1/charges/${chargeId}/capture`,
            { amount_cents: 400 },
            { key: 'capture-abandoned' },
          )
        ).statusCode,
      ).toBe(503)
      expect(await recover()).toEqual({ settled: 1, released: 0, failed: 0 })
      const charge = (await suite.account.get(`/v1/charges/${chargeId}`)).json()
      expect(charge).toMatchObject({ status: 'succeeded', amount_captured_cents: 400 })
      const replay = await suite.account.post(
        `/v1/charges/${chargeId}/capture`,
        { amount_cents: 400 },
        { key: 'capture-abandoned' },
      )
      expect(replay.headers['idempotent-replayed']).toBe('true')
      expect(replay.json()).toEqual(charge)
      expect(await eventTypes(chargeId)).toEqual(['charge.authorized', 'charge.captured'])
    })
  })

  describe('POST /v1/charges/:id/void', () => {
    it('when an authorization is voided, then it is released, the void replays, and it can be neither captured nor refunded', async () => {
      const chargeId = await authorize(1000)
      const voided = await suite.account.post(`/v1/charges/${chargeId}/void`, {}, { key: 'void-once' })
      expect(voided.statusCode).toBe(200)
      expect(voided.json()).toMatchObject({
        status: 'voided',
        captured: false,
        amount_captured_cents: 0,
        amount_capturable_cents: 0,
      })
      const retry = await suite.account.post(`/v1/charges/${chargeId}/void`, {}, { key: 'void-once' })
      expect(retry.rawPayload.equals(voided.rawPayload)).toBe(true)

      const capture = await suite.account.post(`/v1/charges/${chargeId}/capture`, {})
      expect(capture.statusCode).toBe(409)
      expect(capture.json()).toMatchObject({ charge_status: 'voided' })
      expect((await suite.account.post(`/v1/charges/${chargeId}/refunds`, {})).statusCode).toBe(422)
      expect(await processorOperations(chargeId)).toEqual({ void: 1 })
      expect(await eventTypes(chargeId)).toEqual(['charge.authorized', 'charge.voided'])
    })

    it('when a void is sent with an amount, then 400: a void releases the whole authorization', async () => {
      const chargeId = await authorize()
      const response = await suite.account.post(`/v1/charges/${chargeId}/void`, { amount_cents: 10 })
      expect(response.statusCode).toBe(400)
      expect(response.json().type).toMatch(/\/validation-failed$/)
    })

    it('when a capture or void has no body at all, then it is taken as {}', async () => {
      const chargeId = await authorize()
      const response = await suite.context.app.inject({
        method: 'POST',
        url: `/v1/charges/${chargeId}/void`,
        headers: { authorization: `Bearer ${suite.account.apiKey}`, 'idempotency-key': 'void-no-body' },
      })
      expect(response.statusCode).toBe(200)
      expect(response.json().status).toBe('voided')
    })

    it('when a void races a capture, then exactly one of them happens', async () => {
      for (let round = 0; round < 5; round++) {
        const chargeId = await authorize(1000)
        const [capture, voided] = await Promise.all([
          suite.account.post(`/v1/charges/${chargeId}/capture`, {}),
          suite.account.post(`/v1/charges/${chargeId}/void`, {}),
        ])
        expect([capture.statusCode, voided.statusCode].sort()).toEqual([200, 409])
        const operations = await processorOperations(chargeId)
        const charge = (await suite.account.get(`/v1/charges/${chargeId}`)).json()
        if (capture.statusCode === 200) {
          expect(operations).toEqual({ capture: 1 })
          expect(charge.status).toBe('succeeded')
        } else {
          expect(operations).toEqual({ void: 1 })
          expect(charge.status).toBe('voided')
        }
      }
    })
  })
})
