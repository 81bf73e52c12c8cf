// npm run example:invoices -- <command>
//   run                                              collect invoices (a graphile-worker for collect_invoice)
//   add --amount 2500 [--currency usd] [--source pm_card_visa]   a new invoice, and the job that collects it
//   retry <invoice> [--source pm_card_visa]          after a decline: attempt n + 1, and its job
//   list                                             the invoices
// PAYMENTS_URL (default http://127.0.0.1:$PORT) and PAYMENTS_API_KEY say which API and account to charge. The
// invoices and the collector's jobs live in COLLECTOR_DATABASE_URL, or else in a database of their own beside the
// service's (scripts/example-database.ts).
// Run as many collectors as you like: a job a dead one held runs again once its lease of COLLECTOR_LEASE_SECONDS
// (default 30) has run out (see liveness.ts).
import { parseArgs } from 'node:util'
import { run } from 'graphile-worker'
import { createClient } from 'payments-api/client'
import { main } from '../../src/cli/main.js'
import { graphilePool } from '../../src/db/graphile-pool.js'
import { SUPPORTED_CURRENCIES } from '../../src/schemas/common.js'
import { exampleDatabase } from '../example-database.js'
import { localApiUrl } from '../local-api.js'
import { poolLiveness } from './liveness.js'
import {
  addInvoice,
  COLLECT_TASK,
  collectInvoiceTask,
  COLLECTOR_WORKER_SCHEMA,
  prepareCollector,
  retryInvoice,
  type Invoice,
} from './collector.js'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { amount: { type: 'string' }, currency: { type: 'string', default: 'usd' }, source: { type: 'string' } },
})
const [command, invoiceId] = positionals
const usage =
  'usage: npm run example:invoices -- run | add --amount 2500 [--currency usd] [--source pm_card_visa] | retry ' +
  '<invoice> [--source ...] | list'

await main('example:invoices', async () => {
  if (
    !['run', 'add', 'retry', 'list'].includes(command ?? '') ||
    (command === 'retry' && !invoiceId) ||
    (command === 'add' && (!/^[1-9]\d{0,7}$/.test(values.amount ?? '') || !isCurrency(values.currency ?? '')))
  ) {
    console.error(usage)
    process.exitCode = 2
    return
  }
  const database = await exampleDatabase('COLLECTOR_DATABASE_URL', 'invoice_collector', { statementTimeoutMs: 0 })
  const { sql, url } = database
  await prepareCollector(sql, url)

  if (command === 'add') {
    print(
      await addInvoice(sql, {
        amount_cents: Number(values.amount),
        currency: values.currency as Invoice['currency'],
        source: values.source ?? 'pm_card_visa',
      }),
    )
  } else if (command === 'retry') {
    const invoice = await retryInvoice(sql, invoiceId ?? '', { source: values.source })
    if (!invoice) throw new Error(`${invoiceId} is not a declined invoice`)
    print(invoice)
  } else if (command === 'list') {
    for (const invoice of await sql<Invoice[]>`select * from invoice_collector.invoices order by updated_at`)
      print(invoice)
  } else {
    if (!process.env.PAYMENTS_API_KEY)
      throw new Error('set PAYMENTS_API_KEY (npm run --silent account:create -- --name Shop)')
    const client = createClient({ baseUrl: localApiUrl(), apiKey: process.env.PAYMENTS_API_KEY })
    // The worker's pool is ours to end, after the worker and before the database (src/db/graphile-pool.ts says why).
    const pgPool = graphilePool(url, {
      applicationName: 'invoice collector',
      max: 7,
      onError: (error) => console.log(`worker connection: ${error.message}`),
    })
    const liveness = poolLiveness({
      sql,
      pgPool,
      schema: COLLECTOR_WORKER_SCHEMA,
      leaseSeconds: Number(process.env.COLLECTOR_LEASE_SECONDS ?? 30),
      log: console.log,
    })
    const runner = await run({
      pgPool,
      schema: COLLECTOR_WORKER_SCHEMA,
      concurrency: 5,
      parsedCronItems: [], // no scheduled tasks, and no ./crontab to look for (an empty crontab string still did)
      events: liveness.events,
      taskList: { [COLLECT_TASK]: collectInvoiceTask(sql, client, (message) => console.log(message)) },
    })
    await liveness.start()
    console.log(`invoice collector ready: charging through ${localApiUrl()}`)
    await runner.promise.finally(() => liveness.stop())
    await pgPool.end()
  }
  await database.close()
})

function isCurrency(currency: string): currency is Invoice['currency'] {
  return (SUPPORTED_CURRENCIES as readonly string[]).includes(currency)
}

function print(invoice: Invoice) {
  console.log(JSON.stringify(invoice))
}
