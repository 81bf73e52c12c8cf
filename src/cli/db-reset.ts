// npm run db:reset: removes this checkout's embedded PostgreSQL (every account, charge and key in it), so that the
// next start begins empty. Refuses while a server of this checkout runs, and when DATABASE_URL names a database.
import { loadConfig } from '../config.js'
import { resetEmbeddedPostgres } from '../db/embedded.js'
import { main } from './main.js'

await main('db:reset', async () => {
  const config = loadConfig()
  if (config.DATABASE_URL)
    throw new Error(
      'DATABASE_URL is set: db:reset only removes the embedded PostgreSQL of this checkout; drop that database ' +
        'yourself',
    )
  const removed = await resetEmbeddedPostgres({ dataDir: config.DATA_DIR, port: config.EMBEDDED_PG_PORT })
  console.log(JSON.stringify({ removed: removed ?? null }))
})
