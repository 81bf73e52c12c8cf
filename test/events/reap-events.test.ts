import { describe, expect, it } from 'vitest'
import { reapOldEvents } from '../../src/events/reap-events.js'
import { chargeBody, useTestApp } from '../helpers/app.js'

const suite = useTestApp({ config: { WEBHOOK_ALLOW_PRIVATE_URLS: true } })

describe('reapOldEvents', () => {
  it('when events are past their retention, then they go with their deliveries, and recent ones stay', async () => {
    await suite.account.post('/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks', enabled_events: ['*'] })
    await suite.account.post('/v1/charges', chargeBody())
    await suite.account.post('/v1/charges', chargeBody())
    const [old] = await suite.context.sql<
      { id: string }[]
    >`select id from events where account_id = ${suite.account.id} order by seq limit 1`
    await suite.context.sql`update events set created_at = now() - interval '31 days' where id = ${old!.id}`

    expect(await reapOldEvents(suite.context.sql, { retentionDays: 30, batchSize: 10 })).toBe(1)
    const left = await suite.context.sql`select id from events where account_id = ${suite.account.id}`
    expect(left).toHaveLength(1)
    expect(await suite.context.sql`select 1 from webhook_deliveries where event_id = ${old!.id}`).toHaveLength(0)
    expect((await suite.account.get(`/v1/events/${old!.id}`)).statusCode).toBe(404)
  })
})
