// Refunds, partial or full, never more than what is left of the captured amount: with each processor (the
// simulated one, and Stripe's test server through the SDK), whose own books must agree.
import { describe, expect, it } from 'vitest'
import { chargeBody, useTestApp } from '../helpers/app.js'
import { PROCESSORS, useProcessor } from '../helpers/processors.js'

describe.each(PROCESSORS)('with the $name processor', ({ name }) => {
  const under = useProcessor(name)
  const suite = useTestApp({ processor: under.factory })

  async function newCharge(amountCents = 1000, source = 'pm_card_visa'): Promise<string> {
    const response = await suite.account.post('/v1/charges', chargeBody({ amount_cents: amountCents, source }))
    return response.json().id ?? response.json().charge
  }

  async function refundedSoFar(chargeId: string) {
    const [row] = await suite.context.sql<{ refunded: number; total: number }[]>`
      select c.amount_refunded_cents as refunded, coalesce(sum(r.amount_cents), 0)::int as total
      from charges c left join refunds r on r.charge_id = c.id where c.id = ${chargeId} group by c.id`
    return row!
  }

  describe('POST /v1/charges/:id/refunds', () => {
    it('when partial refunds add up to the charge, then each is 201 and the charge is fully refunded', async () => {
      const chargeId = await newCharge(1000)
      const first = await suite.account.post(`/v1/charges/${chargeId}/refunds`, { amount_cents: 300 })
      const rest = await suite.account.post(`/v1/charges/${chargeId}/refunds`, {})

      expect(first.statusCode).toBe(201)
      expect(first.json()).toMatchObject({
        object: 'refund',
        charge: chargeId,
        amount_cents: 300,
        currency: 'usd',
        status: 'succeeded',
      })
      expect(first.json().id).toMatch(/^re_[0-9a-f]{24}$/)
      expect(first.headers.location).toBe(`/v1/refunds/${first.json().id}`)
      expect(rest.json().amount_cents).toBe(700)
      expect((await suite.account.get(`/v1/charges/${chargeId}`)).json().amount_refunded_cents).toBe(1000)
      expect(await refundedSoFar(chargeId)).toEqual({ refunded: 1000, total: 1000 })
    })

    it('when a refund is fetched, then it is returned as created, and not to another account', async () => {
      const chargeId = await newCharge(500)
      const created = await suite.account.post(`/v1/charges/${chargeId}/refunds`, { amount_cents: 100 })
      const fetched = await suite.account.get(`/v1/refunds/${created.json().id}`)
      expect(fetched.statusCode).toBe(200)
      expect(fetched.json()).toEqual(created.json())
      const stranger = await suite.context.newAccount('Stranger')
      expect((await stranger.get(`/v1/refunds/${created.json().id}`)).statusCode).toBe(404)
    })

    it('when a refund exceeds what is left, then 422 refund-exceeds-charge and nothing changes', async () => {
      const chargeId = await newCharge(1000)
      await suite.account.post(`/v1/charges/${chargeId}/refunds`, { amount_cents: 800 })
      const tooMuch = await suite.account.post(`/v1/charges/${chargeId}/refunds`, { amount_cents: 201 })

      expect(tooMuch.statusCode).toBe(422)
      expect(tooMuch.json()).toMatchObject({ amount_refundable_cents: 200 })
      expect(tooMuch.json().type).toMatch(/\/refund-exceeds-charge$/)
      expect(await refundedSoFar(chargeId)).toEqual({ refunded: 800, total: 800 })
    })

    it('when an over-refund is rejected, then its key is released and can carry a corrected amount', async () => {
      const chargeId = await newCharge(1000)
      const rejected = await suite.account.post(
        `/v1/charges/${chargeId}/refunds`,
        { amount_cents: 5000 },
        { key: 'refund-fix' },
      )
      const corrected = await suite.account.post(
        `/v1/charges/${chargeId}/refunds`,
        { amount_cents: 500 },
        { key: 'refund-fix' },
      )
      expect(rejected.statusCode).toBe(422)
      expect(corrected.statusCode).toBe(201)
    })

    it('when the same refund is retried with its key, then it is replayed and refunded once', async () => {
      const chargeId = await newCharge(1000)
      const first = await suite.account.post(
        `/v1/charges/${chargeId}/refunds`,
        { amount_cents: 400 },
        { key: 'refund-once' },
      )
      const retry = await suite.account.post(
        `/v1/charges/${chargeId}/refunds`,
        { amount_cents: 400 },
        { key: 'refund-once' },
      )
      expect(retry.headers['idempotent-replayed']).toBe('true')
      expect(retry.rawPayload.equals(first.rawPayload)).toBe(true)
      expect(await refundedSoFar(chargeId)).toEqual({ refunded: 400, total: 400 })
    })

    it('when one key is reused for a refund of another charge, then 422 idempotency-key-reused', async () => {
      const [a, b] = [await newCharge(1000), await newCharge(1000)]
      await suite.account.post(`/v1/charges/${a}/refunds`, { amount_cents: 100 }, { key: 'refund-path' })
      const other = await suite.account.post(`/v1/charges/${b}/refunds`, { amount_cents: 100 }, { key: 'refund-path' })
      expect(other.statusCode).toBe(422)
      expect(other.json().type).toMatch(/\/idempotency-key-reused$/)
    })

    it('when ten refunds of 300 race on a charge of 1000, then exactly three succeed and the total never exceeds it', async () => {
      const chargeId = await newCharge(1000)
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => suite.account.post(`/v1/charges/${chargeId}/refunds`, { amount_cents: 300 })),
      )

      const statuses = responses.map((response) => response.statusCode).sort()
      expect(statuses).toEqual([201, 201, 201, 422, 422, 422, 422, 422, 422, 422])
      expect(await refundedSoFar(chargeId)).toEqual({ refunded: 900, total: 900 })
      expect(await under.operationsOn(suite.context.sql, chargeId)).toEqual({ refund: 3 })
    })

    it('when the charge failed, then 422 charge-not-refundable', async () => {
      const chargeId = await newCharge(1000, 'pm_card_chargeDeclined')
      const response = await suite.account.post(`/v1/charges/${chargeId}/refunds`, { amount_cents: 100 })
      expect(response.statusCode).toBe(422)
      expect(response.json().type).toMatch(/\/charge-not-refundable$/)
    })

    it('when the charge is fully refunded, then another refund is 422 charge-not-refundable', async () => {
      const chargeId = await newCharge(100)
      await suite.account.post(`/v1/charges/${chargeId}/refunds`, {})
      const response = await suite.account.post(`/v1/charges/${chargeId}/refunds`, {})
      expect(response.statusCode).toBe(422)
      expect(response.json().type).toMatch(/\/charge-not-refundable$/)
    })

    it('when the charge belongs to another account, then 404 and nothing is refunded', async () => {
      const chargeId = await newCharge(1000)
      const stranger = await suite.context.newAccount('Stranger')
      const response = await stranger.post(`/v1/charges/${chargeId}/refunds`, { amount_cents: 100 })
      expect(response.statusCode).toBe(404)
      expect(await refundedSoFar(chargeId)).toEqual({ refunded: 0, total: 0 })
    })

    it.each([[{ amount_cents: 0 }], [{ amount_cents: 'all' }], [{ reason: 'because' }]])(
      'when the body is %j, then 400 validation-failed',
      async (body) => {
        const chargeId = await newCharge(1000)
        const response = await suite.account.post(`/v1/charges/${chargeId}/refunds`, body)
        expect(response.statusCode).toBe(400)
        expect(response.json().type).toMatch(/\/validation-failed$/)
      },
    )
  })
})
