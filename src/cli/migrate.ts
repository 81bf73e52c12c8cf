// npm run migrate: applies pending migrations (ours, then graphile-worker's) and prints what it did. Ten instances
// starting together migrate once: an advisory lock serialises them, and schema_migrations records each version.
import { loadConfig } from '../config.js'
import { openDatabase } from '../db/database.js'
import { main } from './main.js'

await main('migrate', async () => {
  const database = await openDatabase(loadConfig(), {}, { migrate: true })
  try {
    const applied = database.migrationsApplied
    const [current] = await database.sql<
      { name: string }[]
    >`select name from schema_migrations order by name desc limit 1`
    console.log(JSON.stringify({ database: database.description, applied, current: current?.name ?? null }))
  } finally {
    await database.close()
  }
})
