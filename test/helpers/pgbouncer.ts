// A PgBouncer in transaction mode in front of a test's database, as production runs it (docs/high-availability.md).
// Debian's pgbouncer package provides it (.ci/run installs it); it refuses to run as root, so as root it runs as
// `postgres`.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chown, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { idsOf } from '../../src/db/postgres-binaries.js'
import { canConnect, freePort, scratchDir, until } from './system.js'

export const PGBOUNCER = '/usr/sbin/pgbouncer'
export const hasPgBouncer = existsSync(PGBOUNCER)

export interface PgBouncer {
  /** The database's URL with PgBouncer's host and port. */
  url: string
  close(): Promise<void>
}

/** PgBouncer's configuration: transaction mode, listening on loopback only, every database of one server. */
export function pgBouncerIni(options: {
  server: string
  port: number
  authFile: string
  poolSize: number
  extra?: string[]
}): string {
  const [host, port] = options.server.split(':')
  return [
    '[databases]',
    `* = host=${host} port=${port}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${options.port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${options.authFile}`,
    'pool_mode = transaction',
    `default_pool_size = ${options.poolSize}`,
    'ignore_startup_parameters = extra_float_digits',
    ...(options.extra ?? []),
  ].join('\n')
}

export async function startPgBouncer(databaseUrl: string, poolSize = 4): Promise<PgBouncer> {
  const server = new URL(databaseUrl)
  const dir = await scratchDir('payments-pgbouncer-')
  const port = await freePort()
  const user = decodeURIComponent(server.username)
  await writeFile(join(dir, 'userlist.txt'), `"${user}" "${decodeURIComponent(server.password)}"\n`)
  await writeFile(
    join(dir, 'pgbouncer.ini'),
    pgBouncerIni({ server: `${server.hostname}:${server.port}`, port, authFile: join(dir, 'userlist.txt'), poolSize }),
  )
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const postgres = await idsOf('postgres')
    if (!postgres) throw new Error('no postgres user to run PgBouncer as (Debian: apt-get install pgbouncer)')
    const { uid, gid } = postgres
    for (const file of ['', 'userlist.txt', 'pgbouncer.ini']) await chown(join(dir, file), uid, gid)
  }
  const args = [join(dir, 'pgbouncer.ini')]
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', PGBOUNCER, ...args]] : [PGBOUNCER, args]
  const child = spawn(file, argv, { stdio: ['ignore', 'ignore', 'pipe'] })
  let output = ''
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  await until(() => canConnect(port), 10_000).catch((error: unknown) => {
    child.kill('SIGKILL')
    throw new Error(`PgBouncer did not start: ${output}`, { cause: error })
  })
  server.host = `127.0.0.1:${port}`
  return {
    url: server.toString(),
    close: async () => {
      child.kill('SIGTERM')
      await exited
      await rm(dir, { recursive: true, force: true })
    },
  }
}
