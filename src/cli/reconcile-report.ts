// npm run reconcile:report: what the reconciliation found, for an operator. With no option, the disagreements still
// open and the processor's events that wait for their object; `--run` first reads the processor's events and compares
// the books with it, as the scheduled tasks do; `--all` adds the resolved ones; `--resolve <id>` marks one looked at
// (the books are never changed here: a disagreement about money is a person's decision). `--payouts` prints the payout
// report instead (src/processor-events/payout-report.ts): each payout the processor told of in the last `--days` days
// (30), held against the books to the cent, as JSON, or with `--csv` as CSV.
import { parseArgs } from 'node:util'
import { pino } from 'pino'
import { loadConfig } from '../config.js'
import { chargeSettingsOf } from '../processor/pricing.js'
import { openDatabase } from '../db/database.js'
import { compareWithProcessor } from '../processor-events/compare.js'
import { listDiscrepancies, resolveDiscrepancy } from '../processor-events/discrepancies.js'
import { comparePayouts, payoutReport, payoutReportCsv } from '../processor-events/payout-report.js'
import { pullEvents } from '../processor-events/reconcile.js'
import { createProcessor } from '../processor/create.js'
import { main } from './main.js'

await main('reconcile:report', async () => {
  const { values } = parseArgs({
    options: {
      run: { type: 'boolean' },
      all: { type: 'boolean' },
      resolve: { type: 'string' },
      payouts: { type: 'boolean' },
      csv: { type: 'boolean' },
      days: { type: 'string', default: '30' },
    },
  })
  if (!/^[0-9]+$/.test(values.days))
    throw new Error(`--days takes a number of days, not ${JSON.stringify(values.days)}`)
  if (values.csv && !values.payouts) throw new Error('--csv is a form of the payout report: add --payouts')
  const config = loadConfig()
  const database = await openDatabase(config)
  const { sql } = database
  try {
    if (values.resolve !== undefined) {
      if (!/^[0-9]+$/.test(values.resolve))
        throw new Error(`--resolve takes a disagreement's id (a number), not ${JSON.stringify(values.resolve)}`)
      if (!(await resolveDiscrepancy(sql, Number(values.resolve))))
        throw new Error(`no open disagreement ${values.resolve}`)
      console.log(`resolved ${values.resolve}`)
      return
    }
    if (values.run) {
      const log = pino({ level: 'warn' })
      const processor = createProcessor(config, sql, log)
      const settings = chargeSettingsOf(config)
      const pulled = await pullEvents(sql, processor.later, settings, log)
      const payouts = await comparePayouts(sql, log)
      const compared = await compareWithProcessor(sql, processor.later, log)
      // To stderr under --payouts, so that what stdout carries is the report alone (JSON, or CSV to a file).
      const summary = JSON.stringify({ events: pulled, compared, payouts })
      if (values.payouts) console.error(summary)
      else console.log(summary)
    }
    if (values.payouts) {
      const lines = await payoutReport(sql, new Date(Date.now() - Number(values.days) * 86_400_000))
      process.stdout.write(values.csv ? payoutReportCsv(lines) : `${JSON.stringify({ payouts: lines }, null, 2)}\n`)
      return
    }
    const discrepancies = await listDiscrepancies(sql, { includeResolved: values.all ?? false })
    const waiting =
      await sql`select id, type, note, received_at, attempts from processor_events where status = 'waiting' order by
        received_at`
    console.log(JSON.stringify({ discrepancies, waiting_events: waiting }, null, 2))
  } finally {
    await database.close()
  }
})
