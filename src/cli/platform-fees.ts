// npm run --silent platform:fees -- [--since 2026-12-01T00:00:00Z]
// The platform's own books (Stripe Connect's application fees: docs/processors.md): by account and currency, what
// it collected, what it gave back with refunds, and what it kept, one JSON object a line. Each line is the sum of
// the rows src/ledger/platform-fees.ts posted with the account's charges and refunds; the processor's own figure is
// its list of application fees (Stripe: GET /v1/application_fees, amount less amount_refunded).
import { parseArgs } from 'node:util'
import { loadConfig } from '../config.js'
import { openDatabase } from '../db/database.js'
import { platformFeeTotals } from '../ledger/platform-fees.js'
import { main } from './main.js'

const { values } = parseArgs({ options: { since: { type: 'string' } } })
const since = values.since === undefined ? undefined : new Date(values.since)
if (since !== undefined && Number.isNaN(since.getTime())) {
  console.error('usage: npm run --silent platform:fees -- [--since ISO-8601 time]')
  process.exit(2)
}

await main('platform:fees', async () => {
  const database = await openDatabase(loadConfig())
  try {
    for (const line of await platformFeeTotals(database.sql, since)) console.log(JSON.stringify(line))
  } finally {
    await database.close()
  }
})
