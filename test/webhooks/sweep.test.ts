// The sweep wakes exactly the deliveries no live sender will send (a lease run out, or due a while with nobody
// holding it), oldest first, at most a batch a run, once each however often it runs; and it finds them through
// the partial indexes made for it, never by reading every pending delivery.
import { randomBytes } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/app.js'
import { newId } from '../../src/db/ids.js'
import { overdueDeliveries, sweepDeliveries } from '../../src/webhooks/sweep.js'

const suite = useTestApp()
let endpointId: string

/** The states a pending or finished delivery can be in, as the sender leaves them (seconds from now). */
const STATES = {
  delivered: { status: 'delivered', due: -600, lockedFor: null },
  backingOff: { status: 'pending', due: 300, lockedFor: null },
  justDue: { status: 'pending', due: -2, lockedFor: null },
  beingSent: { status: 'pending', due: -600, lockedFor: 30 },
  leaseLapsed: { status: 'pending', due: -600, lockedFor: -5 },
  overdue: { status: 'pending', due: -60, lockedFor: null },
} as const

async function delivery(state: keyof typeof STATES): Promise<string> {
  const { sql } = suite.context
  const { status, due, lockedFor } = STATES[state]
  const eventId = newId('evt')
  await sql`insert into events (id, account_id, type, body) values (${eventId}, ${suite.account.id},
    'charge.succeeded', '{}')`
  const id = newId('wd')
  await sql`
    insert into webhook_deliveries (id, event_id, endpoint_id, account_id, status, next_attempt_at, locked_until)
    values (${id}, ${eventId}, ${endpointId}, ${suite.account.id}, ${status}, now() + ${due} * interval '1 second',
            ${lockedFor === null ? null : sql`now() + ${lockedFor} * interval '1 second'`})`
  return id
}

const jobsFor = async (ids: string[]) =>
  (
    await suite.context.sql<{ id: string }[]>`
    select payload->>'delivery_id' as id from graphile_worker._private_jobs where payload->>'delivery_id' =
      any(${ids}) order by id`
  ).map((row) => row.id)

beforeAll(async () => {
  endpointId = newId('we')
  // Disabled while the fixtures are written, so the fan-out makes no deliveries of its own.
  await suite.context.sql`
    insert into webhook_endpoints (id, account_id, url, enabled_events, status, secret)
    values (${endpointId}, ${suite.account.id}, 'https://hooks.example.com/in', '{*}', 'disabled',
      ${`whsec_${randomBytes(24).toString('base64')}`})`
})

describe('sweepDeliveries', () => {
  it('when deliveries are in every state, then it wakes only the lapsed lease and the overdue one, once each however often it runs', async () => {
    const ids = Object.fromEntries(
      await Promise.all(
        Object.keys(STATES).map(async (state) => [state, await delivery(state as keyof typeof STATES)]),
      ),
    )
    await sweepDeliveries(suite.context.sql, { overdueSeconds: 10 })
    await sweepDeliveries(suite.context.sql, { overdueSeconds: 10 })
    expect(await jobsFor(Object.values(ids))).toEqual([ids.leaseLapsed, ids.overdue].sort())
  })

  it('when more are overdue than a batch, then a run wakes a batch, longest overdue first', async () => {
    await suite.context.sql`delete from graphile_worker._private_jobs`
    await suite.context.sql`update webhook_deliveries set status = 'delivered'`
    const [lapsedLongAgo, overdueLong, overdueLess] = [
      await delivery('leaseLapsed'),
      await delivery('overdue'),
      await delivery('overdue'),
    ]
    await suite.context
      .sql`update webhook_deliveries set locked_until = now() - interval '120 seconds' where id = ${lapsedLongAgo}`
    await suite.context
      .sql`update webhook_deliveries set next_attempt_at = now() - interval '30 seconds' where id = ${overdueLess}`
    expect(await sweepDeliveries(suite.context.sql, { overdueSeconds: 10, batchSize: 2 })).toBe(2)
    expect(await jobsFor([lapsedLongAgo, overdueLong, overdueLess])).toEqual([lapsedLongAgo, overdueLong].sort())
  })

  it('when planned, then it reads pending deliveries only through the partial indexes made for it', async () => {
    const plan = await suite.context.sql.begin(async (tx) => {
      await tx`set local enable_seqscan = off`
      await tx`set local enable_bitmapscan = off`
      const rows = await tx<{ 'QUERY PLAN': string }[]>`explain ${overdueDeliveries(tx, 10, 500)}`
      return rows.map((row) => row['QUERY PLAN']).join('\n')
    })
    expect(plan).toContain('webhook_deliveries_leased')
    expect(plan).toContain('webhook_deliveries_unclaimed')
    expect(plan).not.toMatch(/Seq Scan on webhook_deliveries/)
  })
})
