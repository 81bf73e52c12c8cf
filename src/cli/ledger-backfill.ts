// npm run ledger:backfill: posts the captures, refunds and disputes recorded before the ledger existed (migration
// 0014), once each, with the pricing configured now (src/ledger/backfill.ts). Safe to run again, and beside the
// running service: a cause posted already, live or by an earlier run, posts nothing.
import { loadConfig } from '../config.js'
import { openDatabase } from '../db/database.js'
import { backfillLedger } from '../ledger/backfill.js'
import { chargeSettingsOf } from '../ledger/pricing.js'
import { main } from './main.js'

await main('ledger:backfill', async () => {
  const config = loadConfig()
  const database = await openDatabase(config)
  try {
    console.log(JSON.stringify(await backfillLedger(database.sql, chargeSettingsOf(config).pricing)))
  } finally {
    await database.close()
  }
})
