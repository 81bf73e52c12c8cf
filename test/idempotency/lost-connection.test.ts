// A claim is let go (its lease ended, or the claim released) when its request fails. When the database
// connection is lost under that statement, the service tries once more on another connection, so that a retry
// of the request is not refused with 409 until the lease runs out (30 s by default).
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { createAccount } from '../../src/accounts/api-keys.js'
import { buildApp } from '../../src/app.js'
import { connect, type Sql } from '../../src/db/connect.js'
import { createSimulatedProcessor } from '../../src/processor/simulated.js'
import { chargeBody } from '../helpers/app.js'
import { startCuttingProxy, type CuttingProxy } from '../helpers/cutting-proxy.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { until } from '../helpers/system.js'

let database: TestDatabase
let proxy: CuttingProxy
let pool: Sql
let app: FastifyInstance
let apiKey: string

beforeAll(async () => {
  database = await createTestDatabase()
  // The app's pool goes through a proxy that cuts the connection which sends the lease's end, once.
  proxy = await startCuttingProxy(database.url, (chunk) => chunk.includes('locked_until = now()'))
  pool = connect(proxy.url, { max: 2 })
  // The processor keeps its ledger on a connection of its own, which the proxy does not touch.
  app = await buildApp({
    sql: pool,
    processor: createSimulatedProcessor({ sql: database.sql }),
    log: pino({ level: 'silent' }),
  })
  ;({ api_key: apiKey } = await createAccount(database.sql, 'Lost connection'))
})
afterAll(async () => {
  await app.close()
  await pool.end({ timeout: 1 })
  await proxy.close()
  await database.drop()
})

const post = (key: string, source: string) =>
  app.inject({
    method: 'POST',
    url: '/v1/charges',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
    payload: JSON.stringify(chargeBody({ source })),
  })

describe('a lease ended on a connection that is lost', () => {
  it('when the statement ending it loses its connection, then it ends on a second attempt and a retry settles at once', async () => {
    // Charged at the processor, the answer lost: the request fails with 503 and its lease must end, keeping the
    // key bound to this request; that statement is the one the proxy cuts.
    const lost = await post('lost-connection-1', 'pm_card_responseLost')
    expect(lost.statusCode).toBe(503)
    expect(proxy.cuts()).toBe(1)

    const leaseOver = async () =>
      (
        await database.sql<
          { over: boolean }[]
        >`select locked_until <= now() as over from idempotency_keys where key = 'lost-connection-1'`
      )[0]!.over
    // Well before the 30 s lease would have run out on its own.
    await until(leaseOver, 3000)

    const retry = await post('lost-connection-1', 'pm_card_responseLost')
    expect(retry.statusCode).toBe(201)
    const [{ charges }] = (await database.sql<
      { charges: number }[]
    >`select count(*)::int as charges from charges`) as unknown as [{ charges: number }]
    expect(charges).toBe(1)
  })
})
