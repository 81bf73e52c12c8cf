// npm run --silent platform:fees -- [--since 2026-12-01T00:00:00Z] [--compare]
// The platform's own books (Stripe Connect's application fees: docs/processors.md): by account and currency, what
// it collected, what it gave back with refunds, and what it kept, one JSON object a line. Each line is the sum of
// the rows src/ledger/platform-fees.ts posted with the account's charges and refunds. With --compare, the books
// (all of them) are held against the processor's own list of fees (Stripe: GET /v1/application_fees), by connected
// account and currency, one JSON object a line; it exits 1 when any line disagrees.
import { parseArgs } from 'node:util'
import { pino } from 'pino'
import { loadConfig } from '../config.js'
import { openDatabase } from '../db/database.js'
import { comparePlatformFees, platformFeeTotals } from '../ledger/platform-fees.js'
import { createProcessor } from '../processor/create.js'
import { main } from './main.js'

const { values } = parseArgs({ options: { since: { type: 'string' }, compare: { type: 'boolean' } } })
const since = values.since === undefined ? undefined : new Date(values.since)
if ((since !== undefined && Number.isNaN(since.getTime())) || (values.compare && since !== undefined)) {
  console.error('usage: npm run --silent platform:fees -- [--since ISO-8601 time | --compare]')
  process.exit(2)
}

await main('platform:fees', async () => {
  const config = loadConfig()
  const database = await openDatabase(config)
  try {
    if (!values.compare) {
      for (const line of await platformFeeTotals(database.sql, since)) console.log(JSON.stringify(line))
      return
    }
    const later = createProcessor(config, database.sql, pino({ level: 'warn' })).later
    if (!later.platformFees) throw new Error(`PROCESSOR is ${config.PROCESSOR}: it takes no fees for the platform`)
    const lines = await comparePlatformFees(database.sql, await later.platformFees())
    for (const line of lines) console.log(JSON.stringify(line))
    const disagreeing = lines.filter((line) => !line.agrees).length
    if (disagreeing === 0) return
    console.error(`platform:fees: ${disagreeing} of ${lines.length} lines disagree with the processor`)
    process.exitCode = 1
  } finally {
    await database.close()
  }
})
