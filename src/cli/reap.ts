// npm run reap: deletes expired idempotency records once, as the scheduled worker task does.
import { loadConfig } from '../config.js'
import { openDatabase } from '../db/database.js'
import { reapExpiredKeys } from '../idempotency/reap-expired-keys.js'
import { main } from './main.js'

await main('reap', async () => {
  const config = loadConfig()
  const database = await openDatabase(config)
  try {
    const deleted = await reapExpiredKeys(database.sql, { batchSize: config.REAPER_BATCH_SIZE })
    console.log(JSON.stringify({ deleted }))
  } finally {
    await database.close()
  }
})
