// graphile-worker's pool, made here: a connection PostgreSQL kills (as it does to every session when it stops) is
// reported to onError, never thrown as an unhandled 'error' that ends the process; and given several hosts, it
// connects to the writable one, from the first connection on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect } from '../../src/db/connect.js'
import { graphilePool } from '../../src/db/graphile-pool.js'
import { startPrivateCluster, type PrivateCluster } from '../helpers/cluster.js'
import { startCuttingProxy } from '../helpers/cutting-proxy.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { startServer } from '../helpers/processes.js'
import { until } from '../helpers/system.js'

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database.drop()
})

it('when PostgreSQL terminates its idle connections, then each error is reported and the pool goes on serving', async () => {
  const errors: Error[] = []
  const pool = graphilePool(database.url, {
    applicationName: 'graphile-pool-test',
    max: 2,
    onError: (error) => errors.push(error),
  })
  try {
    const clients = await Promise.all([pool.connect(), pool.connect()])
    for (const client of clients) client.release()

    await database.sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name =
      'graphile-pool-test'`
    // Each dead connection leaves the pool, its error reported (on the connection and on the pool).
    await until(async () => pool.totalCount === 0)

    expect(errors.length).toBeGreaterThanOrEqual(2)
    expect(new Set(errors.map((error) => (error as Error & { code?: string }).code))).toEqual(new Set(['57P01']))
    const { rows } = await pool.query('select 1 as one')
    expect(rows).toEqual([{ one: 1 }])
  } finally {
    await pool.end()
  }
})

describe('when the first host of a multi-host URL is read-only (a standby after a failover)', () => {
  let primary: PrivateCluster
  let standby: PrivateCluster
  let url: string
  beforeAll(async () => {
    ;[primary, standby] = await Promise.all([startPrivateCluster(), startPrivateCluster()])
    // A standby refuses writes: a database whose transactions are read-only answers the same to every probe.
    const admin = connect(standby.url, { max: 1 })
    await admin`alter database payments set default_transaction_read_only = on`
    await admin.end()
    url =
      `postgres://postgres:postgres@${hostOf(standby.url)},${hostOf(primary.url)}` +
      '/payments?target_session_attrs=read-write'
  }, 60_000)
  afterAll(async () => {
    await Promise.all([primary?.destroy(), standby?.destroy()])
  })

  it('then a new pool connects to the writable one the first time', async () => {
    const pool = graphilePool(url, { applicationName: 'graphile-pool-test' })
    try {
      const { rows } = await pool.query<{ port: number; read_only: string }>(
        `select inet_server_port() as port, current_setting('transaction_read_only') as read_only`,
      )
      expect(rows).toEqual([{ port: Number(new URL(primary.url).port), read_only: 'off' }])
    } finally {
      await pool.end()
    }
  })

  it('when the connection is reset while it checks its node, then the attempt fails and the process goes on', async () => {
    // The first `show transaction_read_only` is the probe that finds the primary; the second is the new
    // connection's own check, which the proxy answers with a reset.
    let checks = 0
    const proxy = await startCuttingProxy(
      primary.url,
      (chunk) => chunk.includes('show transaction_read_only') && ++checks === 2,
      1,
      'reset',
    )
    const pool = graphilePool(
      `postgres://postgres:postgres@${hostOf(standby.url)},${hostOf(proxy.url)}` +
        '/payments?target_session_attrs=read-write',
      { applicationName: 'graphile-pool-test' },
    )
    try {
      await expect(pool.query('select 1')).rejects.toMatchObject({ code: 'ECONNRESET' })
      expect(proxy.cuts()).toBe(1)
      // Had the reset been an unhandled 'error', vitest would have failed the run; the next attempt connects.
      const { rows } = await pool.query<{ one: number }>('select 1 as one')
      expect(rows).toEqual([{ one: 1 }])
    } finally {
      await pool.end()
      await proxy.close()
    }
  })

  it('then a worker process with migrations on start starts, and is ready', async () => {
    const worker = await startServer({ DATABASE_URL: url, ROLE: 'worker', MIGRATE_ON_START: 'true' })
    try {
      expect((await fetch(`${worker.url}/readyz`)).status).toBe(200)
      // The line is logged after the listen that startServer waits for, and reaches this process through a pipe.
      await until(async () => worker.output().includes('ready (worker)'))
    } finally {
      worker.child.kill('SIGTERM')
      expect(await worker.exited).toBe(0)
    }
  })
})

function hostOf(url: string): string {
  return new URL(url).host
}
