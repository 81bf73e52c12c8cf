// The example queue worker (scripts/invoice-collector) as a user runs it, a real process with a real
// graphile-worker: killed while its charge is at the API, its job runs again and the invoice is charged once;
// declined, it is tried again only by a deliberate new attempt, under a new key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addInvoice, prepareCollector, retryInvoice, type Invoice } from '../../scripts/invoice-collector/collector.js'
import { controllableProcessor, useTestApp, type TestAccount } from '../helpers/app.js'
import { startScript, type ServerProcess } from '../helpers/processes.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { until } from '../helpers/system.js'

const processor = controllableProcessor()
const suite = useTestApp({ processor: processor.factory })
let api: string
let shop: TestAccount
const collectors: ServerProcess[] = []
// The collector's own database, as a merchant's app has: never the service's (scripts/example-database.ts says why).
let collectorDb: TestDatabase

beforeAll(async () => {
  api = await suite.context.app.listen({ port: 0, host: '127.0.0.1' })
  shop = await suite.context.newAccount('Shop')
  collectorDb = await createTestDatabase()
  await prepareCollector(collectorDb.sql, collectorDb.url)
})
afterAll(async () => {
  for (const collector of collectors) collector.child.kill('SIGKILL')
  await collectorDb?.drop()
})

async function startCollector(): Promise<ServerProcess> {
  const env = {
    COLLECTOR_DATABASE_URL: collectorDb.url,
    PAYMENTS_URL: api,
    PAYMENTS_API_KEY: shop.apiKey,
    COLLECTOR_LEASE_SECONDS: '2',
  }
  const collector = await startScript('scripts/invoice-collector/main.ts', ['run'], env, /invoice collector ready/)
  collectors.push(collector)
  return collector
}

const invoice = async (id: string) =>
  (await collectorDb.sql<Invoice[]>`select * from invoice_collector.invoices where id = ${id}`)[0]!
const chargesOf = (invoiceId: string) =>
  suite.context.sql<{ id: string; status: string; key: string }[]>`
    select c.id, c.status, k.key from charges c
    join idempotency_keys k on k.account_id = c.account_id and k.endpoint = 'POST /v1/charges'
      and c.id = coalesce(convert_from(k.response_body, 'UTF8')::jsonb->>'id', convert_from(k.response_body,
        'UTF8')::jsonb->>'charge')
    where c.account_id = ${shop.id} and c.metadata->>'invoice' = ${invoiceId} order by c.created_at`

describe('the invoice collector', () => {
  it('when it is killed while its charge is at the API, then its job runs again after a restart and the invoice is charged once', async () => {
    const first = await startCollector()
    // It has no scheduled tasks, and says nothing of a crontab file it never needed.
    expect(first.output()).not.toMatch(/crontab|cron is disabled/)
    const callsBefore = processor.calls.length
    const release = processor.holdNext()
    const added = await addInvoice(collectorDb.sql, { amount_cents: 4200, currency: 'usd', source: 'pm_card_visa' })
    // The charge reached the API and the processor.
    await until(async () => processor.calls.length > callsBefore, 15_000)
    first.child.kill('SIGKILL')
    await first.exited
    release() // the API finishes the charge; its answer goes nowhere
    await until(
      async () =>
        (await suite.context.sql`select 1 from charges where metadata->>'invoice' = ${added.id}`).length === 1,
    )

    const second = await startCollector()
    await until(async () => (await invoice(added.id)).status === 'paid', 15_000)

    const charges = await chargesOf(added.id)
    expect(charges).toEqual([
      { id: (await invoice(added.id)).charge_id, status: 'succeeded', key: `charge:${added.id}:attempt:1` },
    ])
    expect(processor.calls.slice(callsBefore)).toHaveLength(1)
    expect(second.output()).toMatch(/unlocked the jobs of dead worker pools: pool-/)
    // Its log line comes after the invoice's row is written, through a pipe: waited for, not assumed.
    const said = `${added.id} paid by ${charges[0]!.id} (key charge:${added.id}:attempt:1, replayed)`
    await until(async () => second.output().includes(said), 15_000)
    second.child.kill('SIGTERM')
    await second.exited
  }, 60_000)

  it('when a charge is declined, then the invoice waits, and a deliberate new attempt charges again under attempt 2', async () => {
    const collector = await startCollector()
    const added = await addInvoice(collectorDb.sql, {
      amount_cents: 1500,
      currency: 'usd',
      source: 'pm_card_chargeDeclined',
    })
    await until(async () => (await invoice(added.id)).status === 'declined', 15_000)
    expect(await invoice(added.id)).toMatchObject({ attempt: 1, failure: expect.any(String) })

    const retried = await retryInvoice(collectorDb.sql, added.id, { source: 'pm_card_visa' })
    // What `retry` prints: attempt 2, open, and no charge yet (not the declined attempt's).
    expect(retried).toMatchObject({ attempt: 2, status: 'open', charge_id: null, failure: null })
    await until(async () => (await invoice(added.id)).status === 'paid', 15_000)

    const charges = await chargesOf(added.id)
    expect(charges.map(({ status, key }) => ({ status, key }))).toEqual([
      { status: 'failed', key: `charge:${added.id}:attempt:1` },
      { status: 'succeeded', key: `charge:${added.id}:attempt:2` },
    ])
    expect((await invoice(added.id)).charge_id).toBe(charges[1]!.id)
    collector.child.kill('SIGTERM')
    await collector.exited
  }, 60_000)
})
