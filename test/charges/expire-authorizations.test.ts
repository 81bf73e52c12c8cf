// Authorizations nobody captured are voided at authorization_expires_at by a worker task, once, whatever crashes
// and redeliveries happen on the way: the processor gets the durable key void:<charge>.
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { EXPIRE_TASK, expireAuthorizations } from '../../src/charges/expire-authorizations.js'
import { loadConfig } from '../../src/config.js'
import { startWorker, workerOptions } from '../../src/worker/worker.js'
import { chargeBody, controllableProcessor, useTestApp } from '../helpers/app.js'
import { runTaskFor } from '../helpers/tasks.js'
import { until } from '../helpers/system.js'

const processor = controllableProcessor()
const suite = useTestApp({ processor: processor.factory })
const log = pino({ level: 'silent' })
const DAY = 86_400_000

async function expiredAuthorization(amountCents = 1000): Promise<string> {
  const id = (await suite.account.post('/v1/charges', chargeBody({ amount_cents: amountCents, capture: false }))).json()
    .id
  await suite.context.sql`update charges set authorization_expires_at = now() - interval '1 second' where id = ${id}`
  return id
}

const expire = () =>
  expireAuthorizations(suite.context.sql, suite.context.processor, { batchSize: 100, leaseSeconds: 60 }, log)

/** The voids the processor performed for this charge, by idempotency key. */
async function voidsOf(chargeId: string): Promise<string[]> {
  const rows = await suite.context.sql<{ idempotency_key: string }[]>`
    select o.idempotency_key from simulated_processor.operations o join charges c on c.processor_reference =
      o.parameters->>'charge_reference'
    where c.id = ${chargeId} and o.kind = 'void'`
  return rows.map((row) => row.idempotency_key)
}

async function expiredEvents(chargeId: string): Promise<number> {
  const [row] = await suite.context.sql<{ count: number }[]>`
    select count(*)::int as count from events where type = 'charge.expired' and body::jsonb->'data'->'object'->>'id' =
      ${chargeId}`
  return row!.count
}

describe('expireAuthorizations', () => {
  it('when it is run for one account at a chosen time, then only that account’s authorizations past it expire', async () => {
    const [shop, cafe] = [await suite.context.newAccount(), await suite.context.newAccount()]
    const held = async (account: typeof shop) =>
      (await account.post('/v1/charges', chargeBody({ capture: false }))).json().id as string
    const [ours, theirs] = [await held(shop), await held(cafe)]
    const days = suite.context.chargeSettings.authorizationExpiresDays
    const status = async (account: typeof shop, id: string) => (await account.get(`/v1/charges/${id}`)).json().status

    await runTaskFor(suite.context, EXPIRE_TASK, { accountId: shop.id, at: new Date(Date.now() + (days - 1) * DAY) })
    expect(await status(shop, ours)).toBe('requires_capture')
    await runTaskFor(suite.context, EXPIRE_TASK, { accountId: shop.id, at: new Date(Date.now() + (days + 1) * DAY) })
    expect(await status(shop, ours)).toBe('expired')
    expect(await voidsOf(ours)).toEqual([`void:${ours}`])
    // The other account's authorization, past the same time, is not this run's.
    expect(await status(cafe, theirs)).toBe('requires_capture')
  })

  it('when an authorization reaches its expiry uncaptured, then it is voided with key void:<charge> and the charge is expired, once', async () => {
    const chargeId = await expiredAuthorization()
    const live = (await suite.account.post('/v1/charges', chargeBody({ capture: false }))).json().id

    expect(await expire()).toBe(1)
    expect(await expire()).toBe(0)

    expect((await suite.account.get(`/v1/charges/${chargeId}`)).json()).toMatchObject({
      status: 'expired',
      captured: false,
      amount_capturable_cents: 0,
    })
    expect(await voidsOf(chargeId)).toEqual([`void:${chargeId}`])
    expect(await expiredEvents(chargeId)).toBe(1)
    expect((await suite.account.get(`/v1/charges/${live}`)).json().status).toBe('requires_capture')
    const capture = await suite.account.post(`/v1/charges/${chargeId}/capture`, {})
    expect(capture.statusCode).toBe(409)
    expect(capture.json()).toMatchObject({ charge_status: 'expired' })
  })

  it('when a run voided at the processor and died before recording it, then the next run after its lease records it without a second void', async () => {
    const chargeId = await expiredAuthorization()
    processor.loseNextAnswer()
    expect(await expire()).toBe(0)
    expect(await voidsOf(chargeId)).toEqual([`void:${chargeId}`])
    // Within the lease, another run leaves it alone, and so does a capture.
    expect(await expire()).toBe(0)
    expect((await suite.account.post(`/v1/charges/${chargeId}/capture`, {})).json().type).toMatch(
      /\/charge-operation-in-progress$/,
    )

    await suite.context.sql`update charges set pending_until = now() - interval '1 second' where id = ${chargeId}`
    expect(await expire()).toBe(1)
    expect(await voidsOf(chargeId)).toEqual([`void:${chargeId}`])
    expect(await expiredEvents(chargeId)).toBe(1)
  })

  it('when two runs race, then each authorization is voided by one of them', async () => {
    const ids = [await expiredAuthorization(), await expiredAuthorization(), await expiredAuthorization()]
    const [a, b] = await Promise.all([expire(), expire()])
    expect(a + b).toBe(3)
    for (const id of ids) expect(await voidsOf(id)).toHaveLength(1)
  })

  it('when the charge was captured before the run, then it is left alone', async () => {
    const chargeId = await expiredAuthorization()
    await suite.account.post(`/v1/charges/${chargeId}/capture`, {})
    expect(await expire()).toBe(0)
    expect(await voidsOf(chargeId)).toEqual([])
  })

  it('when the worker gets the expiry job twice, then the authorization is voided once', async () => {
    const chargeId = await expiredAuthorization()
    const config = loadConfig({})
    const worker = await startWorker(
      workerOptions(config, { url: suite.context.databaseUrl, sql: suite.context.sql }, suite.context.processor, log),
    )
    try {
      await worker.addJob(EXPIRE_TASK, {})
      await worker.addJob(EXPIRE_TASK, {})
      await until(async () => (await suite.account.get(`/v1/charges/${chargeId}`)).json().status === 'expired')
      await until(
        async () =>
          (await suite.context.sql`select 1 from graphile_worker.jobs where task_identifier = ${EXPIRE_TASK}`)
            .length === 0,
      )
    } finally {
      await worker.stop()
    }
    expect(await voidsOf(chargeId)).toEqual([`void:${chargeId}`])
    expect(await expiredEvents(chargeId)).toBe(1)
  })
})
