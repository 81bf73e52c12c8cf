// Events and signed webhooks, end to end over real HTTP: a real receiver in the test, the real worker, and the
// public `standardwebhooks` package (an implementation that is not ours) verifying every signature.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { pino } from 'pino'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { workerJobFailures } from '../../src/observability/metrics.js'
import { deliverWebhook } from '../../src/webhooks/deliver.js'
import { startWorker, workerOptions, type Worker } from '../../src/worker/worker.js'
import { chargeBody, useTestApp, type TestAccount } from '../helpers/app.js'
import { until } from '../helpers/system.js'

const config = { WEBHOOK_ALLOW_PRIVATE_URLS: true, WEBHOOK_RETRY_SCHEDULE: '0.2,0.2,0.2', WEBHOOK_TIMEOUT_MS: 1000 }
const suite = useTestApp({ config })
let worker: Worker

interface Delivery {
  headers: IncomingHttpHeaders
  body: string
}

/**
 * A webhook receiver answering each delivery as told, one answer after another (the last one repeats): a status,
 * 'hang' (never), 'slow' (200 after 300 ms) or 'held' (200 once the test calls `release`). `log` (shared between
 * receivers) records in order when each got a delivery and when its connection closed.
 */
async function receiver(
  answers: (number | 'hang' | 'slow' | 'held')[] = [200],
  log?: { name: string; events: string[] },
) {
  const received: Delivery[] = []
  const held: (() => void)[] = []
  const concurrency = { now: 0, max: 0 }
  const server: Server = createServer((request, response) => {
    let body = ''
    concurrency.max = Math.max(concurrency.max, ++concurrency.now)
    response.on('close', () => {
      concurrency.now--
      log?.events.push(`${log.name} closed`)
    })
    request
      .on('data', (chunk) => (body += chunk))
      .on('end', () => {
        log?.events.push(`${log.name} received`)
        received.push({ headers: request.headers, body })
        const answer = answers[Math.min(received.length - 1, answers.length - 1)]!
        if (answer === 'slow') setTimeout(() => response.writeHead(200).end('ok'), 300)
        else if (answer === 'held') held.push(() => response.writeHead(200).end('ok'))
        else if (answer !== 'hang') response.writeHead(answer).end(answer === 200 ? 'ok' : 'no')
      })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`
  receivers.push(server)
  return {
    url,
    received,
    concurrency,
    release: () => {
      for (const answer of held.splice(0)) answer()
    },
  }
}
const receivers: Server[] = []

beforeAll(async () => {
  worker = await startWorker(
    workerOptions(
      { ...loadConfig({}), ...config },
      { url: suite.context.databaseUrl, sql: suite.context.sql },
      suite.context.processor,
      pino({ level: 'silent' }),
    ),
  )
})
afterAll(async () => {
  await worker?.stop()
  for (const server of receivers) {
    server.closeAllConnections()
    server.close()
  }
})

async function endpointFor(user: TestAccount, url: string, events = ['*']) {
  const response = await user.post('/v1/webhook_endpoints', { url, enabled_events: events, description: 'test' })
  expect(response.statusCode).toBe(201)
  return response.json() as { id: string; secret: string }
}

const deliveriesOf = async (user: TestAccount, endpointId: string) =>
  (await user.get(`/v1/webhook_endpoints/${endpointId}/deliveries`)).json().data

describe('events', () => {
  it('when a charge succeeds, then exactly one charge.succeeded delivery arrives, signed, with the event’s bytes', async () => {
    const user = await suite.context.newAccount()
    const hooks = await receiver()
    const endpoint = await endpointFor(user, hooks.url)
    const charge = (await user.post('/v1/charges', chargeBody())).json()

    await until(async () => hooks.received.length === 1)
    const [delivery] = hooks.received
    const verified = new Webhook(endpoint.secret).verify(
      delivery!.body,
      delivery!.headers as Record<string, string>,
    ) as { type: string; data: { object: { id: string } } }
    expect(verified.type).toBe('charge.succeeded')
    expect(verified.data.object).toEqual(charge)
    const event = await user.get(`/v1/events/${delivery!.headers['webhook-id']}`)
    expect(event.body).toBe(delivery!.body)
    const listed = (await user.get('/v1/events?type=charge.succeeded')).json()
    expect(listed.data.map((item: { id: string }) => item.id)).toEqual([delivery!.headers['webhook-id']])
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(hooks.received).toHaveLength(1)
  })

  it('when a transaction rolls back, then it leaves no event and no delivery', async () => {
    const user = await suite.context.newAccount()
    const hooks = await receiver()
    await endpointFor(user, hooks.url)
    const charge = (await user.post('/v1/charges', chargeBody({ amount_cents: 100 }))).json()
    expect((await user.post(`/v1/charges/${charge.id}/refunds`, { amount_cents: 500 })).statusCode).toBe(422)
    await suite.context
      .sql`create or replace function fail_charge() returns trigger language plpgsql as $$ begin raise exception 'no';
        end $$`
    await suite.context.sql.unsafe(
      `create trigger fail_charge_for before insert on charges for each row when (new.account_id = '${user.id}') ` +
        `execute function fail_charge()`,
    )
    try {
      expect((await user.post('/v1/charges', chargeBody())).statusCode).toBe(500)
    } finally {
      await suite.context.sql`drop trigger fail_charge_for on charges`
    }
    const events = await suite.context.sql`select type from events where account_id = ${user.id}`
    expect(events).toEqual([{ type: 'charge.succeeded' }])
    const [deliveries] = await suite.context
      .sql`select count(*)::int as count from webhook_deliveries where account_id = ${user.id}`
    expect(deliveries!.count).toBe(1)
  })

  it('when a charge is refunded or declined, then charge.refunded (with the refund) and charge.failed are written', async () => {
    const user = await suite.context.newAccount()
    const charge = (await user.post('/v1/charges', chargeBody({ amount_cents: 1000 }))).json()
    const refund = (await user.post(`/v1/charges/${charge.id}/refunds`, { amount_cents: 400 })).json()
    await user.post('/v1/charges', chargeBody({ source: 'pm_card_chargeDeclined' }))
    const events = (await user.get('/v1/events')).json().data
    expect(events.map((event: { type: string }) => event.type)).toEqual([
      'charge.failed',
      'charge.refunded',
      'charge.succeeded',
    ])
    expect(events[1].data).toMatchObject({ object: { id: charge.id, amount_refunded_cents: 400 }, refund })
  })
})

describe('delivery', () => {
  it('when the receiver answers 500 twice, then the third attempt delivers: one webhook-id, identical bodies, three attempts listed', async () => {
    const user = await suite.context.newAccount()
    const hooks = await receiver([500, 500, 200])
    const endpoint = await endpointFor(user, hooks.url)
    await user.post('/v1/charges', chargeBody())

    await until(async () => (await deliveriesOf(user, endpoint.id))[0]?.status === 'delivered', 5000)
    expect(hooks.received).toHaveLength(3)
    expect(new Set(hooks.received.map((delivery) => delivery.headers['webhook-id'])).size).toBe(1)
    expect(new Set(hooks.received.map((delivery) => delivery.body)).size).toBe(1)
    for (const delivery of hooks.received)
      new Webhook(endpoint.secret).verify(delivery.body, delivery.headers as Record<string, string>)
    const [listed] = await deliveriesOf(user, endpoint.id)
    expect(listed.attempts.map((attempt: { status_code: number }) => attempt.status_code)).toEqual([500, 500, 200])
    expect(listed.attempts[0]).toMatchObject({ response_excerpt: 'no', error: null })
  })

  it('when every attempt fails, then the delivery fails after the last one in the schedule', async () => {
    const user = await suite.context.newAccount()
    const hooks = await receiver([503])
    const endpoint = await endpointFor(user, hooks.url)
    await user.post('/v1/charges', chargeBody())
    await until(async () => (await deliveriesOf(user, endpoint.id))[0]?.status === 'failed', 8000)
    expect(hooks.received).toHaveLength(4) // the first attempt, then one per entry of the 3-step schedule
  })

  it('when the receiver answers 410 Gone, then the endpoint is disabled and no more is sent to it', async () => {
    const user = await suite.context.newAccount()
    const hooks = await receiver([410])
    const endpoint = await endpointFor(user, hooks.url)
    await user.post('/v1/charges', chargeBody())
    await until(async () => (await user.get(`/v1/webhook_endpoints/${endpoint.id}`)).json().status === 'disabled')
    expect((await user.get(`/v1/webhook_endpoints/${endpoint.id}`)).json().disabled_reason).toContain('410')
    await user.post('/v1/charges', chargeBody())
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(hooks.received).toHaveLength(1)
  })

  it('when one endpoint hangs, then another endpoint of the account still gets its delivery at once', async () => {
    const user = await suite.context.newAccount()
    const events: string[] = []
    const hanging = await receiver(['hang'], { name: 'hanging', events })
    const healthy = await receiver([200], { name: 'healthy', events })
    await endpointFor(user, hanging.url)
    await endpointFor(user, healthy.url)
    await user.post('/v1/charges', chargeBody())
    await until(async () => healthy.received.length === 1 && hanging.received.length === 1)
    // The healthy endpoint got its delivery before the worker gave up on the hanging one (its 1 s timeout), not
    // after it: a delivery never waits behind another endpoint's.
    const givenUp = events.indexOf('hanging closed')
    expect(givenUp === -1 || givenUp > events.indexOf('healthy received'), events.join(', ')).toBe(true)
  })

  it('when several deliveries are due for one slow endpoint, then it gets one at a time, and all of them', async () => {
    const user = await suite.context.newAccount()
    const slow = await receiver(['slow'])
    const endpoint = await endpointFor(user, slow.url)
    for (let n = 0; n < 3; n++) await user.post('/v1/charges', chargeBody())
    await until(
      async () =>
        (await deliveriesOf(user, endpoint.id)).filter(
          (delivery: { status: string }) => delivery.status === 'delivered',
        ).length === 3,
      8000,
    )
    expect(slow.concurrency.max).toBe(1)
    expect(slow.received).toHaveLength(3)
  })

  it('when a backlog is due for one endpoint, then one job drains it, oldest first, one at a time, each delivery handed over to the next', async () => {
    const user = await suite.context.newAccount()
    const hooks = await receiver()
    const endpoint = await endpointFor(user, hooks.url)
    const { sql } = suite.context
    // The endpoint is busy for an hour: the jobs the events wake find it so and wait for the hour (an outage's
    // backlog).
    await sql`update webhook_endpoints set sending_until = now() + interval '1 hour' where id = ${endpoint.id}`
    for (let n = 0; n < 12; n++) await user.post('/v1/charges', chargeBody())
    const parked = () => sql<{ waiting: number; due: number }[]>`
      select count(*) filter (where j.run_at > now() + interval '30 minutes')::int as waiting, count(*) filter (where
        j.run_at <= now())::int as due
      from graphile_worker._private_jobs j join webhook_deliveries d on d.id = j.payload->>'delivery_id' where
        d.endpoint_id = ${endpoint.id}`
    await until(async () => {
      const [jobs] = await parked()
      return jobs!.waiting === 12 && jobs!.due === 0
    })
    await sql`update webhook_endpoints set sending_until = null where id = ${endpoint.id}`
    const [oldest] = await sql<
      { id: string }[]
    >`select id from webhook_deliveries where endpoint_id = ${endpoint.id} order by next_attempt_at limit 1`

    const settings = { timeoutMs: 1000, retryScheduleMs: [200], allowPrivateUrls: true }
    expect(await deliverWebhook(sql, oldest!.id, settings, pino({ level: 'silent' }), { ms: 60_000 })).toBe('delivered')

    expect(hooks.received).toHaveLength(12)
    expect(hooks.concurrency.max).toBe(1)
    const events = (await user.get('/v1/events?limit=12'))
      .json()
      .data.map((event: { id: string }) => event.id)
      .reverse()
    expect(hooks.received.map((delivery) => delivery.headers['webhook-id'])).toEqual(events)
    const deliveries = (await user.get(`/v1/webhook_endpoints/${endpoint.id}/deliveries?limit=20`)).json().data
    expect(
      deliveries.map((delivery: { status: string; attempts: unknown[] }) => [
        delivery.status,
        delivery.attempts.length,
      ]),
    ).toEqual(Array(12).fill(['delivered', 1]))

    // The jobs still waiting for the hour run now: each finds its delivery done, and sends nothing.
    await sql`
      select graphile_worker.reschedule_jobs(array_agg(j.id), run_at => now())
      from graphile_worker._private_jobs j join webhook_deliveries d on d.id = j.payload->>'delivery_id' where
        d.endpoint_id = ${endpoint.id}`
    await until(async () => (await parked())[0]!.waiting + (await parked())[0]!.due === 0)
    expect(hooks.received).toHaveLength(12)
  })

  it('when an event is redelivered, then it goes again with the same webhook-id', async () => {
    const user = await suite.context.newAccount()
    const hooks = await receiver()
    const endpoint = await endpointFor(user, hooks.url)
    await user.post('/v1/charges', chargeBody())
    await until(async () => hooks.received.length === 1)
    const eventId = String(hooks.received[0]!.headers['webhook-id'])
    const again = await user.post(`/v1/events/${eventId}/redeliver`, { endpoint_id: endpoint.id })
    expect(again.statusCode).toBe(202)
    await until(async () => hooks.received.length === 2)
    expect(hooks.received[1]!.headers['webhook-id']).toBe(eventId)
    expect(hooks.received[1]!.body).toBe(hooks.received[0]!.body)
  })
})

describe('redelivery', () => {
  it('when an event is redelivered while its attempt is still waiting for the answer, then it goes again once that attempt is recorded', async () => {
    const user = await suite.context.newAccount()
    const hooks = await receiver(['held', 200])
    const endpoint = await endpointFor(user, hooks.url)
    await user.post('/v1/charges', chargeBody())
    await until(async () => hooks.received.length === 1)
    const eventId = String(hooks.received[0]!.headers['webhook-id'])
    // Asked for and committed while the first attempt waits for its answer: its record, after, must not undo it.
    expect((await user.post(`/v1/events/${eventId}/redeliver`, { endpoint_id: endpoint.id })).statusCode).toBe(202)
    hooks.release()
    await until(async () => hooks.received.length === 2)
    expect(hooks.received[1]!.headers['webhook-id']).toBe(eventId)
    const deliveries = async () =>
      (await user.get(`/v1/webhook_endpoints/${endpoint.id}/deliveries`)).json().data as {
        status: string
        attempts: { status_code: number }[]
      }[]
    await until(async () => (await deliveries())[0]!.attempts.length === 2)
    const [delivery] = await deliveries()
    expect([delivery!.status, delivery!.attempts.map((attempt) => attempt.status_code)]).toEqual([
      'delivered',
      [200, 200],
    ])
  })

  it('when an event came before its endpoint, then redelivery sends it to the endpoint made since; with no endpoint at all, 404 says so', async () => {
    const user = await suite.context.newAccount()
    await user.post('/v1/charges', chargeBody())
    const [event] = await suite.context.sql<{ id: string }[]>`select id from events where account_id = ${user.id}`
    const nowhere = await user.post(`/v1/events/${event!.id}/redeliver`, {})
    expect(nowhere.statusCode).toBe(404)
    expect(nowhere.json().detail).toContain('No enabled webhook endpoint takes event')

    const hooks = await receiver()
    await endpointFor(user, hooks.url)
    const sent = await user.post(`/v1/events/${event!.id}/redeliver`, {})
    expect(sent.statusCode).toBe(202)
    expect(sent.json().data).toHaveLength(1)
    await until(async () => hooks.received.length === 1)
    expect(hooks.received[0]!.headers['webhook-id']).toBe(event!.id)
  })
})

describe('webhook endpoints', () => {
  it('when created, then the secret is shown once; retrieving, listing, updating and deleting work', async () => {
    const user = await suite.context.newAccount()
    const created = await endpointFor(user, 'http://127.0.0.1:9/never', ['charge.succeeded'])
    expect(created.secret).toMatch(/^whsec_/)
    const fetched = (await user.get(`/v1/webhook_endpoints/${created.id}`)).json()
    expect(fetched).not.toHaveProperty('secret')
    expect(fetched).toMatchObject({
      object: 'webhook_endpoint',
      enabled_events: ['charge.succeeded'],
      status: 'enabled',
    })
    expect((await user.get('/v1/webhook_endpoints')).json().data.map((item: { id: string }) => item.id)).toEqual([
      created.id,
    ])
    const patched = await suite.context.app.inject({
      method: 'PATCH',
      url: `/v1/webhook_endpoints/${created.id}`,
      headers: { authorization: `Bearer ${user.apiKey}`, 'content-type': 'application/json' },
      payload: { disabled: true, enabled_events: ['*'] },
    })
    expect(patched.json()).toMatchObject({
      status: 'disabled',
      disabled_reason: 'disabled by the account',
      enabled_events: ['*'],
    })
    const deleted = await suite.context.app.inject({
      method: 'DELETE',
      url: `/v1/webhook_endpoints/${created.id}`,
      headers: { authorization: `Bearer ${user.apiKey}` },
    })
    expect(deleted.json()).toEqual({ id: created.id, object: 'webhook_endpoint', deleted: true })
    expect((await user.get(`/v1/webhook_endpoints/${created.id}`)).statusCode).toBe(404)
  })

  it('when the secret is rotated, then deliveries are signed with both secrets for a while', async () => {
    const user = await suite.context.newAccount()
    const hooks = await receiver()
    const endpoint = await endpointFor(user, hooks.url)
    const rotated = (await user.post(`/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, {})).json()
    expect(rotated.secret).not.toBe(endpoint.secret)
    await user.post('/v1/charges', chargeBody())
    await until(async () => hooks.received.length === 1)
    const [delivery] = hooks.received
    expect(String(delivery!.headers['webhook-signature']).split(' ')).toHaveLength(2)
    for (const secret of [endpoint.secret, rotated.secret])
      new Webhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>)
  })
})

describe('deleting an endpoint while its delivery is recorded', () => {
  /** A receiver that holds each request until the test answers it. */
  async function heldReceiver() {
    const held: ((status: number) => void)[] = []
    const server = createServer((request, response) => {
      request.resume().on('end', () => held.push((status) => response.writeHead(status).end()))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    receivers.push(server)
    return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`, held }
  }
  const deleteEndpoint = (user: TestAccount, id: string) =>
    suite.context.app.inject({
      method: 'DELETE',
      url: `/v1/webhook_endpoints/${id}`,
      headers: { authorization: `Bearer ${user.apiKey}` },
    })
  // Failed delivery jobs, as the worker counts them (a failure is retried, so the queue alone would not show it).
  const failedJobs = async () =>
    (await workerJobFailures.get()).values.find((value) => value.labels.task === 'deliver_webhook')?.value ?? 0

  it('when the endpoint is deleted during an attempt, then the delivery is done with it: no error, no retry', async () => {
    const user = await suite.context.newAccount()
    const hooks = await heldReceiver()
    const endpoint = await endpointFor(user, hooks.url)
    await user.post('/v1/charges', chargeBody())
    await until(async () => hooks.held.length === 1)
    const failuresBefore = await failedJobs()

    expect((await deleteEndpoint(user, endpoint.id)).statusCode).toBe(200)
    hooks.held[0]!(200)

    await until(
      async () =>
        (await suite.context.sql`select 1 from graphile_worker.jobs where task_identifier = 'deliver_webhook'`)
          .length === 0,
    )
    expect(await failedJobs()).toBe(failuresBefore)
    expect(await suite.context.sql`select 1 from webhook_deliveries where endpoint_id = ${endpoint.id}`).toHaveLength(0)
  })

  it('when deletes race the worker recording attempts, then every delete succeeds and no delivery fails', async () => {
    const user = await suite.context.newAccount()
    const hooks = await heldReceiver()
    const endpoints = []
    for (let n = 0; n < 12; n++) endpoints.push(await endpointFor(user, hooks.url))
    await user.post('/v1/charges', chargeBody())
    // One attempt per endpoint is at the receiver; each is answered at the moment its endpoint is deleted. At least:
    // on a loaded machine an attempt held past WEBHOOK_TIMEOUT_MS is given up and sent again, and its retry is held
    // too (waiting for exactly twelve then waited for ever, as CI found).
    await until(async () => hooks.held.length >= endpoints.length)
    const failuresBefore = await failedJobs()
    const deletes = endpoints.map((endpoint, n) => {
      hooks.held[n]!(200)
      return deleteEndpoint(user, endpoint.id)
    })

    expect((await Promise.all(deletes)).map((response) => response.statusCode)).toEqual(endpoints.map(() => 200))
    await until(
      async () =>
        (await suite.context.sql`select 1 from graphile_worker.jobs where task_identifier = 'deliver_webhook'`)
          .length === 0,
    )
    expect(await failedJobs()).toBe(failuresBefore)
  })
})
