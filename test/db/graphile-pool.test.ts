// graphile-worker's pool, made here: a connection PostgreSQL kills (as it does to every session when it stops) is
// reported to onError, never thrown as an unhandled 'error' that ends the process.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { graphilePool } from '../../src/db/graphile-pool.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
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
  const pool = graphilePool(database.url, { applicationName: 'graphile-pool-test', max: 2, onError: (error) => errors.push(error) })
  try {
    const clients = await Promise.all([pool.connect(), pool.connect()])
    for (const client of clients) client.release()

    await database.sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'graphile-pool-test'`
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
