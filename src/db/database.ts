// Opens the database a process uses: DATABASE_URL when set, otherwise the embedded PostgreSQL under DATA_DIR.
// Migrations are applied on open unless MIGRATE_ON_START is false (then `npm run migrate` is the explicit step).
import type { Config } from '../config.js'
import { connect, type Sql } from './connect.js'
import { startEmbeddedPostgres } from './embedded.js'
import { migrate } from './migrate.js'
import { theRow } from './rows.js'

export interface Database {
  url: string
  sql: Sql
  /** Where the data is, for the operator: the embedded cluster's directory, or DATABASE_URL without its password. */
  description: string
  /** The embedded PostgreSQL (no DATABASE_URL): a developer's machine, never a deployment. */
  embedded: boolean
  /** The migrations this open applied (none when MIGRATE_ON_START is false or the schema was current). */
  migrationsApplied: string[]
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

export async function openDatabase(
  config: Config,
  log: DatabaseLog = {},
  options: { migrate?: boolean } = {},
): Promise<Database> {
  const embedded = config.DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({
        dataDir: config.DATA_DIR,
        port: config.EMBEDDED_PG_PORT,
        database: EMBEDDED_DATABASE_NAME,
        ...log,
      })
  const url = embedded?.url ?? config.DATABASE_URL ?? ''
  const sql = connect(url, {
    max: config.DATABASE_POOL_SIZE,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    transactionPooling: config.DATABASE_TRANSACTION_POOLING,
  })
  let migrationsApplied: string[] = []
  try {
    if (config.DATABASE_TRANSACTION_POOLING) await requireBoundedWaits(sql, config.DATABASE_STATEMENT_TIMEOUT_MS)
    if (options.migrate ?? config.MIGRATE_ON_START)
      migrationsApplied = await migrate(url, {
        transactionPooling: config.DATABASE_TRANSACTION_POOLING,
        connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
      })
  } catch (error) {
    await sql.end({ timeout: 1 })
    await embedded?.stop()
    throw error
  }
  return {
    url,
    sql,
    description: embedded
      ? `embedded PostgreSQL in ${embedded.directory} (port ${config.EMBEDDED_PG_PORT})`
      : withoutPassword(url),
    embedded: embedded !== undefined,
    migrationsApplied,
    close: async () => {
      await sql.end({ timeout: 5 })
      await embedded?.stop()
    },
  }
}

/**
 * Through a transaction pooler the service cannot set its own timeouts, and a statement or a transaction without
 * one can hold locks for ever: it refuses to start until the role has them (ALTER ROLE ... SET, see
 * docs/high-availability.md).
 * Nor may the role's statement_timeout exceed DATABASE_STATEMENT_TIMEOUT_MS: a connection silent past that (plus a
 * margin) is taken for one whose answer was lost and closed (src/db/connect.ts), which would cut longer statements.
 */
async function requireBoundedWaits(sql: Sql, statementTimeoutMs: number): Promise<void> {
  const row = theRow(
    await sql<{ statement: string; idle: string }[]>`
    select (select setting from pg_settings where name = 'statement_timeout') as statement,
      (select setting from pg_settings where name = 'idle_in_transaction_session_timeout') as idle`,
    'the timeouts',
  )
  const unbounded = [
    row.statement === '0' && 'statement_timeout',
    row.idle === '0' && 'idle_in_transaction_session_timeout',
  ].filter(Boolean)
  if (unbounded.length) {
    throw new Error(
      `DATABASE_TRANSACTION_POOLING: the pooler's connections have no ${unbounded.join(' and no ')}; set them on ` +
        `the role, e.g. ` +
        `ALTER ROLE <role> SET statement_timeout = '3s'; ALTER ROLE <role> SET idle_in_transaction_session_timeout ` +
        `= '60s'`,
    )
  }
  if (Number(row.statement) > statementTimeoutMs) {
    throw new Error(
      `DATABASE_TRANSACTION_POOLING: the role's statement_timeout (${row.statement} ms) is longer than ` +
        `DATABASE_STATEMENT_TIMEOUT_MS ` +
        `(${statementTimeoutMs} ms), past which a silent connection is closed; lower the role's or raise ` +
        `DATABASE_STATEMENT_TIMEOUT_MS`,
    )
  }
}

/** postgres://user@host:port/db: what a log may show of a connection string. */
export function withoutPassword(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:@/?#]*):[^@/?#]*@/, '$1@')
}
