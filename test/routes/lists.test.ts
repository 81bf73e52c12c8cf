// Lists page either way from a cursor, filter on creation time, and never let one account's ids reach another's.
import { describe, expect, it } from 'vitest'
import { chargeBody, useTestApp, type TestAccount } from '../helpers/app.js'

const suite = useTestApp({ config: { WEBHOOK_ALLOW_PRIVATE_URLS: true } })

async function charges(user: TestAccount, count: number): Promise<string[]> {
  const ids: string[] = []
  for (let n = 0; n < count; n++)
    ids.push((await user.post('/v1/charges', chargeBody({ amount_cents: 100 + n }))).json().id)
  return ids.reverse() // newest first, as lists are
}

const ids = (response: { json(): { data: { id: string }[] } }) => response.json().data.map((item) => item.id)

describe('GET /v1/charges', () => {
  it('when paged forward with starting_after and back with ending_before, then every page is newest first and they meet', async () => {
    const user = await suite.context.newAccount()
    const all = await charges(user, 5)

    const first = await user.get('/v1/charges?limit=2')
    expect(ids(first)).toEqual(all.slice(0, 2))
    expect(first.json().has_more).toBe(true)
    const second = await user.get(`/v1/charges?limit=2&starting_after=${all[1]}`)
    expect(ids(second)).toEqual(all.slice(2, 4))
    const last = await user.get(`/v1/charges?limit=2&starting_after=${all[3]}`)
    expect(ids(last)).toEqual(all.slice(4))
    expect(last.json().has_more).toBe(false)

    const back = await user.get(`/v1/charges?limit=2&ending_before=${all[4]}`)
    expect(ids(back)).toEqual(all.slice(2, 4))
    expect(back.json().has_more).toBe(true)
    const front = await user.get(`/v1/charges?limit=2&ending_before=${all[2]}`)
    expect(ids(front)).toEqual(all.slice(0, 2))
    expect(front.json().has_more).toBe(false)
  })

  it('when a cursor is another account’s charge or no charge, then 400 cursor-not-found, the same either way', async () => {
    const user = await suite.context.newAccount()
    const [theirs] = await charges(await suite.context.newAccount('Other'), 1)
    await charges(user, 1)
    const foreign = await user.get(`/v1/charges?starting_after=${theirs}`)
    const unknown = await user.get(`/v1/charges?ending_before=ch_${'0'.repeat(24)}`)
    for (const response of [foreign, unknown]) {
      expect(response.statusCode).toBe(400)
      expect(response.json().type).toMatch(/\/cursor-not-found$/)
    }
    expect(foreign.json().detail).toBe(unknown.json().detail)
  })

  it('when filtered on created, then only charges in the window are listed, and the bounds are inclusive or not as named', async () => {
    const user = await suite.context.newAccount()
    const [newest, middle, oldest] = await charges(user, 3)
    const day = (n: number) => `2026-01-0${n}T00:00:00.000Z`
    for (const [id, n] of [
      [oldest, 1],
      [middle, 2],
      [newest, 3],
    ] as [string, number][])
      await suite.context.sql`update charges set created_at = ${day(n)} where id = ${id}`

    expect(ids(await user.get(`/v1/charges?created[gte]=${day(2)}`))).toEqual([newest, middle])
    expect(ids(await user.get(`/v1/charges?created[gt]=${day(2)}`))).toEqual([newest])
    expect(ids(await user.get(`/v1/charges?created[lt]=${day(2)}`))).toEqual([oldest])
    expect(ids(await user.get(`/v1/charges?created[gte]=${day(1)}&created[lte]=${day(2)}`))).toEqual([middle, oldest])
    const bad = await user.get('/v1/charges?created[gt]=yesterday')
    expect(bad.statusCode).toBe(400)
  })

  it('when a window edge lies between two microseconds, then it means what the exact instant means', async () => {
    const user = await suite.context.newAccount()
    const [id = ''] = await charges(user, 1)
    await suite.context.sql`update charges set created_at = '2026-01-01T00:00:00.123456Z' where id = ${id}`
    const listed = async (query: string) => ids(await user.get(`/v1/charges?${query}`)).includes(id)

    // Written with other offsets, and with digits beyond the microsecond PostgreSQL keeps.
    expect(await listed('created[gte]=2026-01-01T00:00:00.1234559Z')).toBe(true)
    expect(await listed('created[gte]=2026-01-01T00:00:00.1234561Z')).toBe(false)
    expect(await listed('created[gt]=2025-12-31T00:00:00.1234559-23:59')).toBe(true)
    expect(await listed('created[gt]=2026-01-01T00:00:00.123456Z')).toBe(false)
    expect(await listed('created[lt]=2026-01-01T23:59:00.1234561%2B23:59')).toBe(true)
    expect(await listed('created[lt]=2026-01-01T00:00:00.123456Z')).toBe(false)
    expect(await listed('created[lte]=2026-01-01T00:00:00.123456Z')).toBe(true)
    expect(await listed('created[lte]=2026-01-01T00:00:00.1234559999Z')).toBe(false)
  })

  it('when looked up by the Idempotency-Key that created it, then that charge, for its own account only', async () => {
    const user = await suite.context.newAccount()
    const created = (await user.post('/v1/charges', chargeBody(), { key: 'order-77' })).json()
    const declined = (
      await user.post('/v1/charges', chargeBody({ source: 'pm_card_chargeDeclined' }), { key: 'order-78' })
    ).json()
    await user.post('/v1/charges', chargeBody())

    const found = await user.get('/v1/charges?idempotency_key=order-77')
    expect(found.json()).toEqual({ object: 'list', data: [created], has_more: false })
    expect(ids(await user.get('/v1/charges?idempotency_key=order-78'))).toEqual([declined.charge])
    expect((await user.get('/v1/charges?idempotency_key=never-sent')).json().data).toEqual([])
    const stranger = await suite.context.newAccount('Stranger')
    expect((await stranger.get('/v1/charges?idempotency_key=order-77')).json().data).toEqual([])
  })
})

describe('GET /v1/refunds and GET /v1/charges/:id/refunds', () => {
  it('when an account has refunds of several charges, then both lists page through them, newest first', async () => {
    const user = await suite.context.newAccount()
    const [a, b] = await charges(user, 2)
    const refunds: string[] = []
    for (const [charge, amount] of [
      [a, 10],
      [b, 11],
      [a, 12],
    ] as const)
      refunds.unshift((await user.post(`/v1/charges/${charge}/refunds`, { amount_cents: amount })).json().id)

    expect(ids(await user.get('/v1/refunds'))).toEqual(refunds)
    expect(ids(await user.get(`/v1/refunds?limit=1&starting_after=${refunds[0]}`))).toEqual([refunds[1]])
    expect(ids(await user.get(`/v1/refunds?ending_before=${refunds[2]}`))).toEqual(refunds.slice(0, 2))
    expect(ids(await user.get(`/v1/charges/${a}/refunds`))).toEqual([refunds[0], refunds[2]])
    expect((await user.get(`/v1/charges/${a}/refunds`)).json().data[0]).toEqual(
      (await user.get(`/v1/refunds/${refunds[0]}`)).json(),
    )
  })

  it('when another account’s charge or refund is used, then 404 for the charge and 400 for the cursor, and nothing of theirs is listed', async () => {
    const user = await suite.context.newAccount()
    const [mine] = await charges(user, 1)
    const other = await suite.context.newAccount('Other')
    const [theirs] = await charges(other, 1)
    const theirRefund = (await other.post(`/v1/charges/${theirs}/refunds`, { amount_cents: 5 })).json().id

    expect((await user.get(`/v1/charges/${theirs}/refunds`)).statusCode).toBe(404)
    expect((await user.get(`/v1/refunds?starting_after=${theirRefund}`)).statusCode).toBe(400)
    expect((await user.get(`/v1/charges/${mine}/refunds?starting_after=${theirRefund}`)).statusCode).toBe(400)
    expect((await user.get('/v1/refunds')).json().data).toEqual([])
  })
})

describe('GET /v1/events', () => {
  it('when paged back with ending_before, then the newer events come, newest first', async () => {
    const user = await suite.context.newAccount()
    await charges(user, 3)
    const all = ids(await user.get('/v1/events'))
    expect(all).toHaveLength(3)
    expect(ids(await user.get(`/v1/events?ending_before=${all[2]}&limit=1`))).toEqual([all[1]])
    expect(ids(await user.get(`/v1/events?ending_before=${all[2]}&type=charge.succeeded`))).toEqual(all.slice(0, 2))
  })
})

describe('every list, filtered on created', () => {
  const lists = [
    '/v1/charges',
    '/v1/refunds',
    '/v1/events',
    '/v1/balance_transactions',
    '/v1/webhook_endpoints',
    '/v1/charges/{charge}/refunds',
    '/v1/payouts',
  ]
  // RFC 3339 admits each of these; PostgreSQL alone would refuse the offsets beyond ±15:59 and the year 0000.
  const admitted = [
    '1372-12-01T20:03:25.6128-18:45',
    '0001-01-01T00:00:00%2B23:59',
    '0001-01-01T00:00:00-23:59',
    '0000-01-01T00:00:00Z',
    '9999-12-31T23:59:59.999999999-23:59',
    '9999-12-31T23:59:59z',
    '2026-06-30t12:00:00.1234567890123%2B05:45',
    '2016-12-31T23:59:60Z',
  ]

  it('when the edges are any date-time RFC 3339 admits, then each list answers 200, and an edge beyond every row lists all or nothing', async () => {
    const user = await suite.context.newAccount()
    const [charge] = await charges(user, 1)
    await user.post(`/v1/charges/${charge}/refunds`, { amount_cents: 10 })
    await user.post('/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks', enabled_events: ['charge.refunded'] })
    const payout = await suite.context.app.inject({
      method: 'POST',
      url: '/simulated-processor/payouts',
      payload: { available_by: new Date(Date.now() + 30 * 86_400_000).toISOString() },
    })
    expect(payout.statusCode, payout.body).toBe(200)
    for (const list of lists.map((path) => path.replace('{charge}', charge!))) {
      for (const edge of admitted) {
        for (const bound of ['gt', 'gte', 'lt', 'lte']) {
          const response = await user.get(`${list}?created[${bound}]=${edge}`)
          expect({ list, edge, bound, status: response.statusCode }).toEqual({ list, edge, bound, status: 200 })
        }
      }
      const all = ids(await user.get(list))
      expect(all.length, list).toBeGreaterThan(0)
      expect(ids(await user.get(`${list}?created[gt]=0000-01-01T00:00:00Z`)), list).toEqual(all)
      expect(ids(await user.get(`${list}?created[lte]=0001-01-01T00:00:00%2B23:59`)), list).toEqual([])
      expect(ids(await user.get(`${list}?created[lt]=9999-12-31T23:59:59-23:59`)), list).toEqual(all)
      expect(ids(await user.get(`${list}?created[gte]=9999-12-31T23:59:59.9999999Z`)), list).toEqual([])
    }
  })

  it('when an edge is not an RFC 3339 date-time, then 400 naming the parameter', async () => {
    const user = await suite.context.newAccount()
    for (const edge of [
      '2026-01-01T00:00:00',
      '2026-01-01T00:00:00Z[Europe/Paris]',
      '2026-02-30T00:00:00Z',
      '2026-01-01T00:00:00%2B24:00',
    ]) {
      const response = await user.get(`/v1/charges?created[gte]=${edge}`)
      expect(response.statusCode, edge).toBe(400)
      expect(response.json().detail, edge).toContain('created[gte]')
    }
  })
})
