// Scale-out: two API processes and two workers against one PostgreSQL, as docker-compose runs them. Duplicates
// split across the APIs still make one charge; a job scheduled once runs once; only workers run jobs.
import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createAccount } from '../src/accounts/api-keys.js'
import { contractFetch } from './helpers/contract.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'
import { startServer, type ServerProcess } from './helpers/processes.js'
import { until } from './helpers/system.js'

let database: TestDatabase
let apis: ServerProcess[]
let workers: ServerProcess[]
let apiKey: string
let accountId: string

beforeAll(async () => {
  database = await createTestDatabase()
  ;({ api_key: apiKey, account_id: accountId } = await createAccount(database.sql, 'Scale-out'))
  const env = {
    DATABASE_URL: database.url,
    RECOVERY_GRACE_SECONDS: '3',
    PROCESSOR_TIMEOUT_MS: '2500',
    RECOVERY_SCHEDULE: '0 0 1 1 *',
  }
  apis = await Promise.all([startServer({ ...env, ROLE: 'api' }), startServer({ ...env, ROLE: 'api' })])
  workers = await Promise.all([startServer({ ...env, ROLE: 'worker' }), startServer({ ...env, ROLE: 'worker' })])
}, 60_000)
afterAll(async () => {
  for (const server of [...(apis ?? []), ...(workers ?? [])]) server.child.kill('SIGKILL')
  await database.drop()
})

// The servers are child processes: their answers are checked against openapi.yaml from outside.
const violations: string[] = []
const checkedFetch = contractFetch(violations)
afterEach(() => expect(violations.splice(0)).toEqual([]))

const charge = (url: string, key: string, source = 'pm_card_visa') =>
  checkedFetch(`${url}/v1/charges`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ amount_cents: 1500, currency: 'usd', source, metadata: { key } }),
  })

describe('two APIs and two workers', () => {
  it('when 20 duplicates are split across the two APIs, then there is one charge and every 201 names it', async () => {
    const key = randomUUID()
    const responses = await Promise.all(Array.from({ length: 20 }, (_, n) => charge(apis[n % 2]!.url, key)))
    const created = await Promise.all(
      responses
        .filter((response) => response.status === 201)
        .map((response) => response.json() as Promise<{ id: string }>),
    )
    expect(responses.every((response) => [201, 409].includes(response.status))).toBe(true)
    expect(new Set(created.map((body) => body.id)).size).toBe(1)
    const [row] = await database.sql`select count(*)::int as count from charges where account_id = ${accountId} and
        metadata->>'key' = ${key}`
    expect(row!.count).toBe(1)
  })

  it('when a lost outcome schedules its recovery once, then exactly one worker runs it, and no API does', async () => {
    const key = randomUUID()
    expect((await charge(apis[0]!.url, key, 'pm_card_responseLost')).status).toBe(503)
    await until(
      async () =>
        (await database.sql`select completed_at from idempotency_keys where key = ${key}`)[0]?.completed_at != null,
      15_000,
    )
    // The worker logs after its transaction commits: wait for the line itself, not only for the row.
    const settledBy = () => workers.filter((worker) => worker.output().includes('recovery: outcome recorded'))
    await until(async () => settledBy().length > 0, 15_000)
    expect(settledBy()).toHaveLength(1)
    for (const api of apis) expect(api.output()).not.toContain('Worker connected')
    for (const worker of workers) expect(worker.output()).toContain('ready (worker)')
    const [row] = await database.sql`select count(*)::int as count from charges where account_id = ${accountId} and
        metadata->>'key' = ${key}`
    expect(row!.count).toBe(1)
  })

  it('when a worker is asked for the API, then it answers its health checks only', async () => {
    expect((await checkedFetch(`${workers[0]!.url}/readyz`)).status).toBe(200)
    expect((await fetch(`${workers[0]!.url}/v1/charges`)).status).toBe(404)
  })
})
