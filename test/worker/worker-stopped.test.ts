// No process keeps running with its worker stopped: graphile-worker shuts itself down when any app installs its
// schema in the same database (it announces the migration database-wide). The shipped examples keep their own
// database; a process whose worker stops anyway says so on /readyz and exits 1, for its supervisor to replace.
import { Logger, runMigrations } from 'graphile-worker'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildHealthApp } from '../../src/app.js'
import { withGraphilePool } from '../../src/db/graphile-pool.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { runNpmScript, startServer, type ServerProcess } from '../helpers/processes.js'

let database: TestDatabase
const running: ServerProcess[] = []
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  for (const server of running) server.child.kill('SIGKILL')
  const collectorDb = `${new URL(database.url).pathname.slice(1)}_invoice_collector`
  await database.sql`drop database if exists ${database.sql(collectorDb)} with (force)`
  await database.drop()
})

async function server(): Promise<ServerProcess> {
  const started = await startServer({ DATABASE_URL: database.url })
  running.push(started)
  return started
}

const schemas = async () =>
  (await database.sql<{ nspname: string }[]>`select nspname from pg_namespace where nspname like '%worker%'`).map(
    (row) => row.nspname,
  )

describe('a worker that stops', () => {
  it('when the invoice example runs beside the server, then it uses a database of its own and the server’s worker keeps running', async () => {
    const service = await server()
    const { code, stderr } = await runNpmScript(['example:invoices', '--', 'list'], { DATABASE_URL: database.url })
    expect(code, stderr).toBe(0)

    expect(await schemas()).toEqual(['graphile_worker'])
    expect((await fetch(`${service.url}/readyz`)).status).toBe(200)
    // A graphile-worker migration elsewhere in the database would have stopped it at once (the next test).
    expect(service.child.exitCode).toBeNull()
  })

  it('when graphile-worker stops by itself (another schema migrated in its database), then the process logs why and exits 1', async () => {
    const service = await server()
    await withGraphilePool(database.url, 'another app', (pgPool) =>
      runMigrations({ pgPool, schema: 'another_app_worker', logger: new Logger(() => () => {}) }),
    )

    expect(await service.exited).toBe(1)
    expect(service.output()).toContain('the background worker stopped by itself; exiting with status 1')
  })

  it('when the worker is not running, then /readyz answers 503 and says so', async () => {
    const app = await buildHealthApp({
      sql: database.sql,
      log: pino({ level: 'silent' }),
      notReady: () => 'The background worker is not running.',
    })
    const response = await app.inject({ method: 'GET', url: '/readyz' })
    await app.close()

    expect(response.statusCode).toBe(503)
    expect(response.json()).toMatchObject({ status: 503, detail: 'The background worker is not running.' })
  })
})
