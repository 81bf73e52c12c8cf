// Where an example app (the webhook receiver, the invoice collector) keeps its own records: the database its
// own variable names, as a merchant's app would have; else the service's (DATABASE_URL, or the embedded one).
import { loadConfig } from '../src/config.js'
import { connect, type PoolOptions, type Sql } from '../src/db/connect.js'
import { openDatabase } from '../src/db/database.js'

export async function exampleDatabase(urlVariable: string, pool: PoolOptions = {}): Promise<{ url: string; sql: Sql; close(): Promise<void> }> {
  const url = process.env[urlVariable]
  if (!url) return openDatabase(loadConfig())
  const sql = connect(url, pool)
  return { url, sql, close: () => sql.end({ timeout: 5 }) }
}
