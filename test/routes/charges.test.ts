import { describe, expect, it } from 'vitest'
import { chargeBody, countCharges, useTestApp } from '../helpers/app.js'

const suite = useTestApp()

describe('POST /v1/charges', () => {
  it('when the card succeeds, then a 201 charge is returned with its Location, and one row is stored', async () => {
    const response = await suite.account.post(
      '/v1/charges',
      chargeBody({ description: 'Order 1', metadata: { order_id: '1' } }),
    )

    expect(response.statusCode).toBe(201)
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
    const charge = response.json()
    expect(charge).toMatchObject({
      object: 'charge',
      amount_cents: 2500,
      amount_refunded_cents: 0,
      currency: 'usd',
      source: 'pm_card_visa',
      description: 'Order 1',
      metadata: { order_id: '1' },
      status: 'succeeded',
      failure_code: null,
    })
    expect(charge.id).toMatch(/^ch_[0-9a-f]{24}$/)
    expect(new Date(charge.created_at).toISOString()).toBe(charge.created_at)
    expect(response.headers.location).toBe(`/v1/charges/${charge.id}`)
    expect(response.headers['idempotent-replayed']).toBeUndefined()
    const [row] = await suite.context.sql`select account_id, amount_cents, status from charges where id = ${charge.id}`
    expect(row).toEqual({ account_id: suite.account.id, amount_cents: 2500, status: 'succeeded' })
  })

  it('when the card is declined, then a 402 problem names the failed charge, which is recorded', async () => {
    const response = await suite.account.post('/v1/charges', chargeBody({ source: 'pm_card_chargeDeclined' }))

    expect(response.statusCode).toBe(402)
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8')
    const problem = response.json()
    expect(problem).toMatchObject({ title: 'The card was declined', status: 402, decline_code: 'generic_decline' })
    expect(problem.type).toMatch(/\/card-declined$/)
    const [row] = await suite.context.sql`select status, failure_code from charges where id = ${problem.charge}`
    expect(row).toEqual({ status: 'failed', failure_code: 'generic_decline' })
  })

  it.each([
    ['amount below 1', { amount_cents: 0 }],
    ['amount above 99999999', { amount_cents: 100_000_000 }],
    ['amount not an integer', { amount_cents: 10.5 }],
    ['amount as a string', { amount_cents: '2500' }],
    ['unsupported currency', { currency: 'xyz' }],
    ['uppercase currency', { currency: 'USD' }],
    ['source with spaces', { source: 'pm card' }],
    ['unknown field', { amount: 5 }],
    ['metadata value not a string', { metadata: { a: 1 } }],
    ['metadata key with spaces', { metadata: { 'a b': 'x' } }],
    ['too many metadata keys', { metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }],
  ])('when the body has %s, then 400 validation-failed and nothing is stored', async (_case, overrides) => {
    const before = await countCharges(suite.context.sql, suite.account.id)
    const response = await suite.account.post('/v1/charges', chargeBody(overrides))

    expect(response.statusCode).toBe(400)
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8')
    const problem = response.json()
    expect(problem.type).toMatch(/\/validation-failed$/)
    expect(problem.errors.length).toBeGreaterThan(0)
    expect(problem.detail).toMatch(/^body/)
    expect(await countCharges(suite.context.sql, suite.account.id)).toBe(before)
  })

  it('when a required field is missing, then the problem says which', async () => {
    const { amount_cents: _, ...withoutAmount } = chargeBody()
    const response = await suite.account.post('/v1/charges', withoutAmount)
    expect(response.statusCode).toBe(400)
    expect(response.json().detail).toContain('amount_cents')
  })
})

describe('GET /v1/charges/:id', () => {
  it('when the charge is the account’s, then it is returned as created', async () => {
    const created = await suite.account.post('/v1/charges', chargeBody())
    const response = await suite.account.get(`/v1/charges/${created.json().id}`)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual(created.json())
  })

  it('when the charge belongs to another account, then 404, as if it did not exist', async () => {
    const created = await suite.account.post('/v1/charges', chargeBody())
    const stranger = await suite.context.newAccount('Stranger')
    const response = await stranger.get(`/v1/charges/${created.json().id}`)
    expect(response.statusCode).toBe(404)
    expect(response.json().type).toMatch(/\/resource-not-found$/)
  })
})

describe('GET /v1/charges', () => {
  it('when paging with limit and starting_after, then every charge comes once, newest first', async () => {
    const lister = await suite.context.newAccount('Lister')
    const ids: string[] = []
    for (let n = 1; n <= 5; n++) ids.push((await lister.post('/v1/charges', chargeBody({ amount_cents: n }))).json().id)

    const first = (await lister.get('/v1/charges?limit=2')).json()
    const second = (await lister.get(`/v1/charges?limit=2&starting_after=${first.data[1].id}`)).json()
    const third = (await lister.get(`/v1/charges?limit=2&starting_after=${second.data[1].id}`)).json()

    expect(first).toMatchObject({ object: 'list', has_more: true })
    expect(third.has_more).toBe(false)
    expect([...first.data, ...second.data, ...third.data].map((charge: { id: string }) => charge.id)).toEqual(
      ids.reverse(),
    )
  })

  it('when no limit is given, then a page holds 10', async () => {
    const busy = await suite.context.newAccount('Busy')
    for (let n = 0; n < 11; n++) await busy.post('/v1/charges', chargeBody())
    const page = (await busy.get('/v1/charges')).json()
    expect(page.data).toHaveLength(10)
    expect(page.has_more).toBe(true)
  })

  it('when another account lists, then it sees none of these charges', async () => {
    const stranger = await suite.context.newAccount('Empty')
    expect((await stranger.get('/v1/charges')).json()).toEqual({ object: 'list', data: [], has_more: false })
  })

  it.each([
    ['limit=0', 'validation-failed'],
    ['limit=101', 'validation-failed'],
    ['limit=abc', 'validation-failed'],
    ['starting_after=nope', 'validation-failed'],
    ['colour=red', 'validation-failed'],
    // Well formed, but no charge of this account.
    ['starting_after=ch_000000000000000000000000', 'cursor-not-found'],
  ])('when the query is %s, then 400 %s', async (query, type) => {
    const response = await suite.account.get(`/v1/charges?${query}`)
    expect(response.statusCode).toBe(400)
    expect(response.json().type).toBe(`https://payments.example.com/problems/${type}`)
  })
})
