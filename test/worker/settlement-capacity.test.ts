// Money-settling work has capacity of its own: a worker busy with hundreds of deliveries to an endpoint that
// never answers still settles a lost charge within the recovery bound (the grace period plus the job's start).
import { createServer, type Server } from 'node:http'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { startWorker, workerOptions, type Worker } from '../../src/worker/worker.js'
import { chargeBody, useTestApp } from '../helpers/app.js'
import { until } from '../helpers/system.js'

// Each delivery attempt holds a slot for the whole timeout (40 s); the recovery grace outlasts the processor's
// timeout (its lookups are queries, slow on a loaded machine).
const config = {
  WEBHOOK_ALLOW_PRIVATE_URLS: true,
  WEBHOOK_TIMEOUT_MS: 40_000,
  RECOVERY_GRACE_SECONDS: 3,
  PROCESSOR_TIMEOUT_MS: 2500,
  WORKER_CONCURRENCY: 4,
}
const suite = useTestApp({ config })
let worker: Worker
let hanging: Server
let hangingUrl: string

beforeAll(async () => {
  hanging = createServer(() => {}) // reads the request, never answers
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve))
  hangingUrl = `http://127.0.0.1:${(hanging.address() as { port: number }).port}/hooks`
})
afterAll(async () => {
  // The hanging attempts end (in errors) first, so that the worker's stop does not wait for their timeout.
  hanging.closeAllConnections()
  hanging.close()
  await worker?.stop()
})

describe('the worker under a webhook backlog', () => {
  it('when hundreds of deliveries hang, then a lost charge is still settled by the recovery worker within its bound', async () => {
    const user = await suite.context.newAccount()
    for (let n = 0; n < 20; n++) {
      expect((await user.post('/v1/webhook_endpoints', { url: hangingUrl, enabled_events: ['*'] })).statusCode).toBe(
        201,
      )
    }
    for (let n = 0; n < 10; n++) expect((await user.post('/v1/charges', chargeBody())).statusCode).toBe(201)
    worker = await startWorker(
      workerOptions(
        { ...loadConfig({}), ...config },
        { url: suite.context.databaseUrl, sql: suite.context.sql },
        suite.context.processor,
        pino({ level: 'silent' }),
      ),
    )
    // Every delivery slot is taken by an attempt that will not end for 40 s; 200 deliveries wait behind them.
    await until(
      async () =>
        (await suite.context.sql`select 1 from webhook_deliveries where attempts > 0`).length ===
        config.WORKER_CONCURRENCY,
    )

    const lost = await user.post('/v1/charges', chargeBody({ source: 'pm_card_responseLost' }), {
      key: 'lost-behind-backlog',
    })
    expect(lost.statusCode).toBe(503)
    await until(
      async () =>
        (
          await suite.context
            .sql`select 1 from idempotency_keys where key = 'lost-behind-backlog' and completed_at is not null`
        ).length === 1,
      30_000,
    )

    const [backlog] = await suite.context.sql<
      { waiting: number }[]
    >`select count(*)::int as waiting from webhook_deliveries where status = 'pending' and attempts = 0`
    expect(backlog!.waiting).toBeGreaterThan(150)
    const replay = await user.post('/v1/charges', chargeBody({ source: 'pm_card_responseLost' }), {
      key: 'lost-behind-backlog',
    })
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
  })
})
