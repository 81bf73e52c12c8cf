// The default database when DATABASE_URL is unset: a real PostgreSQL kept under DATA_DIR, so that a new user
// needs nothing but Node. A cluster already serving this checkout's directory (the server, while a script
// runs) is joined, not restarted; one serving another directory on the port is refused, never shared.
import { createHash } from 'node:crypto'
import { mkdir, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import postgres from 'postgres'
import { withTimeout } from './errors.js'
import { LocalCluster } from './local-cluster.js'
import { canReach, postgresBinaries } from './postgres-binaries.js'
import { theRow } from './rows.js'

export interface EmbeddedDatabase {
  url: string
  /** Where the cluster keeps its files: DATA_DIR/pg, unless that is out of the postgres user's reach. */
  directory: string
  /** Stops the PostgreSQL this process started; a no-op when it joined one that was already running. */
  stop(): Promise<void>
}

const USER = 'postgres'
// A loopback-only development cluster: the password guards nothing that the file system does not.
const PASSWORD = 'postgres'
/** Where a root user's cluster lives when DATA_DIR is in a directory the postgres user cannot enter. */
const ROOT_FALLBACK_DIR = '/var/lib/payments-api'
/** The file in DATA_DIR that names the cluster's directory. */
export const WHERE_FILE = 'POSTGRES_DATA_LIVES_IN'

export async function startEmbeddedPostgres(options: {
  dataDir: string
  port: number
  database: string
  /** PostgreSQL's own output, line by line. */
  onLog?: (line: string) => void
  /** What this module decided that an operator should know (where the cluster lives, and why). */
  onNotice?: (message: string) => void
}): Promise<EmbeddedDatabase> {
  const notice = options.onNotice ?? (() => {})
  const serverUrl = `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/postgres`
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${options.database}`
  const binaries = await postgresBinaries({ onLog: notice })
  const directory = await clusterDirectory(resolve(options.dataDir), binaries.runAs, notice)
  // Said where a user looks first: the cluster may live outside DATA_DIR (as root, see clusterDirectory).
  await writeFile(
    join(resolve(options.dataDir), WHERE_FILE),
    `${directory}\n# this checkout's embedded PostgreSQL keeps its data there; npm run db:reset removes it\n`,
  )

  const serving = await directoryServedAt(serverUrl)
  if (serving !== undefined) {
    if (serving !== (await realpath(directory).catch(() => directory))) {
      throw new Error(
        `port ${options.port} is already used by the embedded PostgreSQL of another checkout (its data directory ` +
          `is ${serving}); ` +
          'set EMBEDDED_PG_PORT to a free port for this one, or stop that server',
      )
    }
    await createDatabaseIfMissing(serverUrl, options.database)
    return { url, directory, stop: async () => {} }
  }

  const cluster = new LocalCluster({
    directory,
    port: options.port,
    user: USER,
    password: PASSWORD,
    binaries,
    ...(options.onLog && { onLog: options.onLog }),
  })
  if (!(await cluster.isInitialised())) await cluster.initialise()
  await cluster.start().catch(async (error: Error) => {
    throw new Error(`${error.message}${await hintFor(error.message, directory)}`)
  })
  // If this process exits without stopping it (an uncaught error), the cluster goes too.
  const stopOnExit = () => cluster.signalServer('SIGINT')
  process.once('exit', stopOnExit)
  await createDatabaseIfMissing(serverUrl, options.database)
  return {
    url,
    directory,
    stop: async () => {
      process.removeListener('exit', stopOnExit)
      await cluster.stop()
    },
  }
}

/** What to do about the usual start-up failures, in the operator's terms. */
async function hintFor(message: string, directory: string): Promise<string> {
  if (/already in use/i.test(message)) return '; set EMBEDDED_PG_PORT to a free port'
  if (/lock file "postmaster.pid" already exists/.test(message)) {
    // Line 4 of postmaster.pid is the port the running server listens on.
    const port = (await readFile(join(directory, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[3]?.trim()
    if (port)
      return `; this data directory is already being served on port ${port}: set EMBEDDED_PG_PORT=${port} to use it`
  }
  return ''
}

/**
 * Removes this checkout's embedded cluster (and DATA_DIR's pointer to it), refusing while a server of this
 * checkout serves it on `port`. Returns the directory removed, or undefined when there was none.
 */
export async function resetEmbeddedPostgres(options: { dataDir: string; port: number }): Promise<string | undefined> {
  const dataDir = resolve(options.dataDir)
  const [named = ''] = (await readFile(join(dataDir, WHERE_FILE), 'utf8').catch(() => ''))
    .split('\n')
    .map((line) => line.trim())
  const directory = named || join(dataDir, 'pg')
  const serving = await directoryServedAt(`postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/postgres`)
  if (serving !== undefined && serving === (await realpath(directory).catch(() => directory))) {
    throw new Error(
      `the embedded PostgreSQL in ${directory} is running (port ${options.port}): stop the server of this checkout ` +
        `first`,
    )
  }
  const existed = (await readFile(join(directory, 'PG_VERSION'), 'utf8').catch(() => undefined)) !== undefined
  // A root fallback cluster sits in a directory of its own under ROOT_FALLBACK_DIR: that goes whole.
  await rm(directory.startsWith(`${ROOT_FALLBACK_DIR}/`) ? dirname(directory) : directory, {
    recursive: true,
    force: true,
  })
  await rm(join(dataDir, WHERE_FILE), { force: true })
  return existed ? directory : undefined
}

async function clusterDirectory(
  dataDir: string,
  runAs: { uid: number; gid: number } | undefined,
  log: (message: string) => void,
): Promise<string> {
  await mkdir(dataDir, { recursive: true })
  if (!runAs || canReach(runAs, dataDir)) return join(dataDir, 'pg')
  const fallback = join(ROOT_FALLBACK_DIR, createHash('sha256').update(dataDir).digest('hex').slice(0, 16), 'pg')
  await mkdir(fallback, { recursive: true, mode: 0o755 })
  log(
    `running as root, PostgreSQL runs as the postgres user, who cannot enter ${dataDir}; its cluster is kept in ` +
      `${fallback}`,
  )
  return fallback
}

/** The data directory of the PostgreSQL answering at `url` with our credentials, or undefined if none does. */
async function directoryServedAt(url: string): Promise<string | undefined> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} })
  try {
    // Bounded: postgres.js keeps retrying a server that accepts connections and then drops them.
    const { data_directory: directory } = theRow(
      await withTimeout(
        sql<{ data_directory: string }[]>`select current_setting('data_directory') as data_directory`.execute(),
        3000,
        'the embedded cluster',
      ),
      'the data directory',
    )
    return await realpath(directory).catch(() => directory)
  } catch {
    return undefined
  } finally {
    await sql.end({ timeout: 1 })
  }
}

/** Creates `database` on the server at `serverUrl` unless it exists (a race with another creator is fine). */
export async function createDatabaseIfMissing(serverUrl: string, database: string): Promise<void> {
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
