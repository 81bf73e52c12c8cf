// A process that starts while its database is unavailable (a failover under way, PostgreSQL restarting) keeps
// trying, saying so in its log, and is ready once the database answers; with DATABASE_START_WAIT_SECONDS=0 it
// exits at the first failure, as before. The database "comes back" when the proxy in front of it starts passing
// connections through: until then it cuts each one as it opens.
import { connect as connectSocket, createServer, type Server, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startCuttingProxy } from './helpers/cutting-proxy.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'
import { startServer, startScript, type ServerProcess } from './helpers/processes.js'
import { until } from './helpers/system.js'

let database: TestDatabase
let proxy: Server
let proxyUrl: string
let passing = false
const started: ServerProcess[] = []

beforeAll(async () => {
  database = await createTestDatabase()
  const target = new URL(database.url)
  proxy = createServer((client: Socket) => {
    if (!passing) return void client.destroy()
    const upstream = connectSocket(Number(target.port), target.hostname)
    client.pipe(upstream).pipe(client)
    for (const socket of [client, upstream])
      socket
        .on('error', () => {})
        .on('close', () => {
          client.destroy()
          upstream.destroy()
        })
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  const url = new URL(database.url)
  url.port = String((proxy.address() as { port: number }).port)
  proxyUrl = url.toString()
})

afterAll(async () => {
  for (const process of started) process.child.kill('SIGKILL')
  proxy?.close()
  await database?.drop()
})

describe('starting while the database is unavailable', () => {
  it('when the database comes back during start-up, then a worker that kept trying is ready, and its log said why it waited', async () => {
    passing = false
    const worker = await startScript(
      'src/server.ts',
      [],
      { PORT: '0', LOG_LEVEL: 'info', DATABASE_URL: proxyUrl, ROLE: 'worker' },
      /(trying again in \d+ ms)/,
      'worker',
    )
    started.push(worker)
    passing = true
    await until(async () => /ready \(worker\)/.test(worker.output()), 60_000)
    const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(worker.output())![1]!
    expect((await fetch(`${url}/readyz`)).status).toBe(200)
    expect(worker.output()).toMatch(
      /"msg":"opening the database: the database is not available \([^)]+\); trying again in 250 ms"/,
    )
    expect(worker.child.exitCode).toBeNull()
  })

  it('when DATABASE_START_WAIT_SECONDS is 0, then it exits 1 at the first failure, saying why', async () => {
    passing = false
    const server = startServer({ DATABASE_URL: proxyUrl, ROLE: 'api', DATABASE_START_WAIT_SECONDS: '0' })
    await expect(server).rejects.toThrow(/exited with 1 before it was ready[\s\S]*could not start/)
  })

  it('when a start-up statement is never answered (its connection gone quiet: no answer, no reset), then the process exits 1 after STARTUP_TIMEOUT_SECONDS, naming the step', async () => {
    // The first statement that names graphile-worker's schema (its migrations, on opening the database) is
    // swallowed, and nothing closes.
    const quiet = await startCuttingProxy(database.url, (chunk) => chunk.includes('graphile_worker'), 1, 'silence')
    try {
      const server = startServer({
        DATABASE_URL: quiet.url,
        ROLE: 'worker',
        DATABASE_START_WAIT_SECONDS: '2',
        STARTUP_TIMEOUT_SECONDS: '10',
      })
      await expect(server).rejects.toThrow(
        new RegExp(
          String.raw`exited with 1 before it was ready[\s\S]*` +
            String.raw`"msg":"start-up did not finish within 10 s \(at: opening the database\)`,
        ),
      )
      expect(quiet.cuts()).toBe(1)
    } finally {
      await quiet.close()
    }
  }, 60_000)
})

describe('through a transaction pooler (DATABASE_TRANSACTION_POOLING)', () => {
  it("when the role's statement_timeout is longer than DATABASE_STATEMENT_TIMEOUT_MS, then it refuses to start, saying so; raised to match, it starts", async () => {
    // The service sets no timeouts of its own through a pooler; a connection silent past its own bound is closed
    // as one whose answer was lost (src/db/connect.ts), which would cut the role's longer statements.
    const pooled = await createTestDatabase()
    try {
      const name = new URL(pooled.url).pathname.slice(1)
      await pooled.sql.unsafe(`alter role current_user in database "${name}" set statement_timeout = '10s'`)
      await pooled.sql.unsafe(
        `alter role current_user in database "${name}" set idle_in_transaction_session_timeout = '60s'`,
      )
      const env = {
        DATABASE_URL: pooled.url,
        ROLE: 'api',
        DATABASE_TRANSACTION_POOLING: 'true',
        DATABASE_START_WAIT_SECONDS: '0',
      }
      await expect(startServer(env)).rejects.toThrow(
        new RegExp(
          String.raw`exited with 1 before it was ready[\s\S]*` +
            String.raw`statement_timeout \(10000 ms\) is longer than DATABASE_STATEMENT_TIMEOUT_MS \(3000 ms\)`,
        ),
      )
      const server = await startServer({ ...env, DATABASE_STATEMENT_TIMEOUT_MS: '10000' })
      started.push(server)
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
    } finally {
      await pooled.drop()
    }
  }, 60_000)
})
