// An attempt's record is fenced by the claim it was made under (src/webhooks/deliveries.ts recordAttempt): a sender
// whose lease ran out while it waited for an answer, and whose delivery another sender has claimed since, records
// its attempt and nothing more (it leaves the endpoint to that sender); a redelivery asked for during an attempt is
// not undone by the attempt's record. The
// sender's functions run here by hand, one step at a time, with no worker to take a turn of its own.
import { randomBytes } from 'node:crypto'
import { beforeAll, expect, it } from 'vitest'
import { newId } from '../../src/db/ids.js'
import { type ClaimedDelivery, claimDelivery, recordAttempt, redeliver } from '../../src/webhooks/deliveries.js'
import { useTestApp } from '../helpers/app.js'

const suite = useTestApp()
let endpointId: string

beforeAll(async () => {
  endpointId = newId('we')
  await suite.context.sql`
    insert into webhook_endpoints (id, account_id, url, enabled_events, status, secret)
    values (${endpointId}, ${suite.account.id}, 'https://hooks.example.com/in', '{*}', 'enabled',
      ${`whsec_${randomBytes(24).toString('base64')}`})`
})

/** A pending delivery, due now, with no job to wake a sender: only this test sends it. */
async function pendingDelivery(): Promise<{ id: string; eventId: string }> {
  const { sql } = suite.context
  const eventId = newId('evt')
  await sql`insert into events (id, account_id, type, body) values (${eventId}, ${suite.account.id},
    'charge.succeeded', '{}')`
  await sql`delete from webhook_deliveries where event_id = ${eventId}`
  const id = newId('wd')
  await sql`insert into webhook_deliveries (id, event_id, endpoint_id, account_id, next_attempt_at)
    values (${id}, ${eventId}, ${endpointId}, ${suite.account.id}, now())`
  return { id, eventId }
}

const claim = async (id: string, leaseSeconds = 30) => {
  const claimed = await claimDelivery(suite.context.sql, id, leaseSeconds)
  if (!claimed || 'busyUntil' in claimed) throw new Error(`delivery ${id} could not be claimed: ${String(claimed)}`)
  return claimed
}
const answered200 = { status_code: 200, duration_ms: 5, response_excerpt: 'ok', error: null }
const record = (delivery: ClaimedDelivery) =>
  suite.context.sql.begin((tx) => recordAttempt(tx, delivery, answered200, { status: 'delivered' }))
const endpointHeld = async () => {
  const [row] = await suite.context.sql<{ held: boolean }[]>`
    select sending_until > now() as held from webhook_endpoints where id = ${endpointId}`
  return row?.held ?? false
}
const stateOf = async (id: string) => {
  const [row] = await suite.context.sql<{ status: string; attempts: number; locked: boolean; recorded: number }[]>`
    select status, attempts, locked_until is not null as locked,
      (select count(*)::int from webhook_attempts where delivery_id = ${id}) as recorded
    from webhook_deliveries where id = ${id}`
  return row
}

it('when a sender records an attempt after its lease ran out and another sender claimed the delivery, then only the attempt is recorded', async () => {
  const { id } = await pendingDelivery()
  const late = await claim(id)
  // Its lease runs out while it waits for the answer (the endpoint is free again too).
  await suite.context.sql`update webhook_deliveries set locked_until = now() - interval '1 second' where id = ${id}`
  await suite.context.sql`update webhook_endpoints set sending_until = null where id = ${endpointId}`
  const current = await claim(id)
  expect(current.attempt).toBe(2)

  await record(late)
  expect(await stateOf(id)).toEqual({ status: 'pending', attempts: 2, locked: true, recorded: 1 })
  // Nor does it let go of the endpoint, which the current sender holds: no second attempt may start beside its own.
  expect(await endpointHeld()).toBe(true)
  await record(current)
  expect(await stateOf(id)).toEqual({ status: 'delivered', attempts: 2, locked: false, recorded: 2 })
})

it('when a redelivery is asked for while the attempt waits for its answer, then the delivery stays due after the attempt is recorded', async () => {
  const { id, eventId } = await pendingDelivery()
  const sending = await claim(id)
  await suite.context.sql.begin((tx) => redeliver(tx, suite.account.id, eventId, endpointId))
  const recorded = await record(sending)
  expect(await stateOf(id)).toEqual({ status: 'pending', attempts: 1, locked: false, recorded: 1 })
  // The endpoint's release finds it due again: it is woken (or handed over) at once.
  expect(recorded).toEqual({ recorded: true, handedOver: undefined })
  const [job] = await suite.context.sql`
    select 1 from graphile_worker._private_jobs where payload->>'delivery_id' = ${id}`
  expect(job).toBeDefined()
})
