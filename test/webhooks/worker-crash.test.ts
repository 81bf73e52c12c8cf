// The worker is killed in the middle of a delivery: after a restart the event is delivered again with the same
// webhook-id, and the shipped receiver (scripts/webhook-receiver) applies it once.
import { createServer, type IncomingHttpHeaders } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createReceiver, prepareReceiverTables } from '../../scripts/webhook-receiver/receiver.js'
import { chargeBody, useTestApp } from '../helpers/app.js'
import { startServer, type ServerProcess } from '../helpers/processes.js'
import { until } from '../helpers/system.js'

const suite = useTestApp({ config: { WEBHOOK_ALLOW_PRIVATE_URLS: true } })
const requests: { headers: IncomingHttpHeaders; body: string; answer: string }[] = []
let url: string
let receiverServer: ReturnType<typeof createServer>
const workers: ServerProcess[] = []

beforeAll(async () => {
  await prepareReceiverTables(suite.context.sql)
  let receive: ReturnType<typeof createReceiver> | undefined
  receiverServer = createServer((request, response) => {
    let body = ''
    request
      .on('data', (chunk) => (body += chunk))
      .on('end', async () => {
        const result = await receive!(body, request.headers)
        requests.push({ headers: request.headers, body, answer: result.body })
        // The first delivery is applied and committed, and its answer never comes back: the worker dies waiting.
        if (requests.length > 1) response.writeHead(result.status).end(result.body)
      })
  })
  await new Promise<void>((resolve) => receiverServer.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(receiverServer.address() as { port: number }).port}/hooks`
  const endpoint = (
    await suite.account.post('/v1/webhook_endpoints', { url, enabled_events: ['charge.succeeded'] })
  ).json()
  receive = createReceiver({ sql: suite.context.sql, secret: endpoint.secret })
})
afterAll(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL')
  receiverServer.closeAllConnections()
  receiverServer.close()
})

const worker = async () => {
  const started = await startServer({
    DATABASE_URL: suite.context.databaseUrl,
    ROLE: 'worker',
    WEBHOOK_TIMEOUT_MS: '5000',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    // The dead worker may have held more than the delivery: its start-up sweep, or a scheduled task, running when
    // it was killed keeps that task's queue locked (CI at c12a5b4: the new worker's sweep waited behind it, and the
    // delivery did not go within 15 s). The new worker frees a silent pool's locks after this long (src/worker/
    // liveness.ts), whichever of its sweep or the freed job then sends the delivery.
    WORKER_DEAD_AFTER_SECONDS: '3',
  })
  workers.push(started)
  return started
}

describe('a worker killed mid-delivery', () => {
  it('when it restarts, then the event goes again with the same webhook-id, and the receiver applies it once', async () => {
    const first = await worker()
    const charge = (await suite.account.post('/v1/charges', chargeBody())).json()
    await until(async () => requests.length === 1, 10_000)
    first.child.kill('SIGKILL')
    await first.exited
    const [delivery] = await suite.context.sql<
      { id: string; locked_until: Date }[]
    >`select id, locked_until from webhook_deliveries where account_id = ${suite.account.id}`
    expect(delivery!.locked_until.getTime()).toBeGreaterThan(Date.now()) // the dead sender's lease still holds it

    // Once the lease has run out, a new worker finds the delivery (its sweep at start-up) and sends it again.
    await until(
      async () =>
        (await suite.context.sql`select 1 from webhook_deliveries where id = ${delivery!.id} and locked_until <= now()`)
          .length === 1,
      15_000,
    )
    await worker()
    await until(async () => requests.length === 2, 15_000)
    await until(
      async () =>
        (await suite.context.sql`select status from webhook_deliveries where id = ${delivery!.id}`)[0]!.status ===
        'delivered',
      10_000,
    )

    expect(requests[1]!.headers['webhook-id']).toBe(requests[0]!.headers['webhook-id'])
    expect(requests[1]!.body).toBe(requests[0]!.body)
    expect(requests.map((request) => request.answer)).toEqual(['applied', 'already applied'])
    const [applied] = await suite.context
      .sql`select applied_events, status from receiver_charges where charge_id = ${charge.id}`
    expect(applied).toEqual({ applied_events: 1, status: 'succeeded' })
  }, 60_000)
})
