import { describe, expect, it } from 'vitest'
import { reapExpiredKeys } from '../../src/idempotency/reap-expired-keys.js'
import { chargeBody, useTestApp } from '../helpers/app.js'

const suite = useTestApp()

const keysLeft = async () =>
  (
    await suite.context.sql<
      { key: string }[]
    >`select key from idempotency_keys where account_id = ${suite.account.id} order by key`
  ).map((row) => row.key)

describe('reapExpiredKeys', () => {
  it('when keys have expired, then they are deleted in batches, and live keys and their charges stay', async () => {
    for (let n = 0; n < 7; n++) await suite.account.post('/v1/charges', chargeBody(), { key: `old-${n}` })
    await suite.account.post('/v1/charges', chargeBody(), { key: 'live' })
    await suite.context.sql`update idempotency_keys set expires_at = now() - interval '1 minute' where key like 'old-%'`

    const deleted = await reapExpiredKeys(suite.context.sql, { batchSize: 3 })

    expect(deleted).toBe(7)
    expect(await keysLeft()).toEqual(['live'])
    const [charges] = await suite.context
      .sql`select count(*)::int as count from charges where account_id = ${suite.account.id}`
    expect(charges!.count).toBe(8)
  })

  it('when more is expired than maxBatches allows, then it stops and leaves the rest for the next run', async () => {
    for (let n = 0; n < 5; n++) await suite.account.post('/v1/charges', chargeBody(), { key: `bulk-${n}` })
    await suite.context
      .sql`update idempotency_keys set expires_at = now() - interval '1 minute' where key like 'bulk-%'`

    expect(await reapExpiredKeys(suite.context.sql, { batchSize: 2, maxBatches: 2 })).toBe(4)
    expect(await reapExpiredKeys(suite.context.sql, { batchSize: 2, maxBatches: 2 })).toBe(1)
    expect(await reapExpiredKeys(suite.context.sql, { batchSize: 2, maxBatches: 2 })).toBe(0)
  })

  it('when a reaped key is sent again, then it is a new request', async () => {
    const first = await suite.account.post('/v1/charges', chargeBody(), { key: 'reaped' })
    await suite.context.sql`update idempotency_keys set expires_at = now() - interval '1 minute' where key = 'reaped'`
    await reapExpiredKeys(suite.context.sql, { batchSize: 100 })
    const again = await suite.account.post('/v1/charges', chargeBody(), { key: 'reaped' })
    expect(again.statusCode).toBe(201)
    expect(again.json().id).not.toBe(first.json().id)
  })
})
