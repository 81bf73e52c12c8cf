// Applies db/migrations/*.sql in name order, each once, under an advisory lock so that processes starting
// together (server, scripts, test workers) never race; then graphile-worker's own schema, which the app's
// transactions enqueue jobs into (graphile_worker.add_job), so it must exist before the first request.
import { readdir, readFile } from 'node:fs/promises'
import { Logger, runMigrations } from 'graphile-worker'
import { connect } from './connect.js'
import { withGraphilePool } from './graphile-pool.js'

const MIGRATIONS_DIR = new URL('../../db/migrations/', import.meta.url)
const MIGRATION_LOCK_ID = 727_001
const silent = new Logger(() => () => {})

export interface MigrateOptions {
  transactionPooling?: boolean
  connectTimeoutMs?: number
}

export async function migrate(connectionString: string, options: MigrateOptions = {}): Promise<string[]> {
  const applied = await applyMigrations(connectionString, options)
  await withGraphilePool(connectionString, 'payments-api migrate', (pgPool) =>
    runMigrations({ pgPool, logger: silent, noPreparedStatements: options.transactionPooling ?? false }),
  )
  return applied
}

async function applyMigrations(connectionString: string, options: MigrateOptions): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((name) => name.endsWith('.sql')).sort()
  // A connection of its own, without the statement bounds of the process's pool: a migration, or the wait for
  // another process's, may take longer than a request's statement may, and its silence is not a lost answer.
  const sql = connect(connectionString, { max: 1, statementTimeoutMs: 0, ...options })
  try {
    return await sql.begin(async (tx) => {
      // Through a transaction pooler the role's statement_timeout applies; a migration is exempt from it too.
      await tx`set local statement_timeout = 0`
      await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`
      await tx`create table if not exists schema_migrations (
        name text primary key,
        applied_at timestamptz not null default now()
      )`
      const done = new Set((await tx<{ name: string }[]>`select name from schema_migrations`).map((row) => row.name))
      const names: string[] = []
      for (const name of files.filter((file) => !done.has(file))) {
        await tx.unsafe(await readFile(new URL(name, MIGRATIONS_DIR), 'utf8'))
        await tx`insert into schema_migrations (name) values (${name})`
        names.push(name)
      }
      return names
    })
  } finally {
    await sql.end({ timeout: 1 })
  }
}
