// Opens the database a process uses: DATABASE_URL when set, otherwise the embedded PostgreSQL under DATA_DIR.
// Migrations are applied on open, so the server and the scripts always see the same, current schema.
import type { Config } from '../config.js'
import { connect, type Sql } from './connect.js'
import { startEmbeddedPostgres } from './embedded.js'
import { migrate } from './migrate.js'

export interface Database {
  url: string
  sql: Sql
  /** Closes the pool, then stops the embedded PostgreSQL if this process started it. */
  close(): Promise<void>
}

export const EMBEDDED_DATABASE_NAME = 'payments'

export interface DatabaseLog {
  /** PostgreSQL's own output, when it is embedded. */
  onLog?: (line: string) => void
  /** Decisions about the embedded cluster an operator should see. */
  onNotice?: (message: string) => void
}

export async function openDatabase(config: Config, log: DatabaseLog = {}): Promise<Database> {
  const embedded = config.DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({ dataDir: config.DATA_DIR, port: config.EMBEDDED_PG_PORT, database: EMBEDDED_DATABASE_NAME, ...log })
  const url = config.DATABASE_URL ?? embedded!.url
  const sql = connect(url, {
    max: config.DATABASE_POOL_SIZE,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
  })
  try {
    await migrate(sql, url)
  } catch (error) {
    await sql.end({ timeout: 1 })
    await embedded?.stop()
    throw error
  }
  return {
    url,
    sql,
    close: async () => {
      await sql.end({ timeout: 5 })
      await embedded?.stop()
    },
  }
}
