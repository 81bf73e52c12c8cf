// The server as a process: a crash mid-charge loses nothing and charges once; SIGTERM drains before exit.
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAccount } from '../src/accounts/api-keys.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'
import { startServer, type ServerProcess } from './helpers/processes.js'
import { until } from './helpers/system.js'

let database: TestDatabase
let apiKey: string
let accountId: string
const running: ServerProcess[] = []

beforeAll(async () => {
  database = await createTestDatabase()
  ;({ api_key: apiKey, account_id: accountId } = await createAccount(database.sql, 'Process tests'))
})
afterAll(async () => {
  for (const server of running) server.child.kill('SIGKILL')
  await database.drop()
})

async function server(): Promise<ServerProcess> {
  const started = await startServer({ DATABASE_URL: database.url, IDEMPOTENCY_LEASE_SECONDS: '1', REQUEST_TIMEOUT_MS: '1000', SIMULATED_SLOW_MS: '600' })
  running.push(started)
  return started
}

const charge = (url: string, key: string, source = 'pm_card_slow') =>
  fetch(`${url}/v1/charges`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ amount_cents: 4200, currency: 'usd', source }),
  })

const keyRow = async (key: string) =>
  (await database.sql`select operation_id, claim_token, completed_at from idempotency_keys where account_id = ${accountId} and key = ${key}`)[0]
const chargesOf = () => database.sql`select id, processor_reference from charges where account_id = ${accountId}`

describe('the server process', () => {
  it('when it is killed mid-charge, then nothing is recorded, and the retry after the lease charges once with the same processor key', async () => {
    const first = await server()
    const lost = charge(first.url, 'crash-1').catch((error: unknown) => error)
    await until(async () => (await keyRow('crash-1')) !== undefined)
    first.child.kill('SIGKILL')
    await first.exited
    expect(await lost).toBeInstanceOf(Error) // the client saw its connection drop

    const abandoned = await keyRow('crash-1')
    expect(abandoned).toMatchObject({ completed_at: null })
    expect(abandoned!.claim_token).not.toBeNull()
    expect(await chargesOf()).toHaveLength(0)

    const second = await server()
    await new Promise((resolve) => setTimeout(resolve, 1100)) // the dead holder's 1 s lease runs out
    const retry = await charge(second.url, 'crash-1')

    expect(retry.status).toBe(201)
    const charges = await chargesOf()
    expect(charges).toHaveLength(1)
    // The processor was asked with the operation id of the first attempt, so a real one would have deduped it.
    const expected = `sim_ch_${createHash('sha256').update(abandoned!.operation_id).digest('hex').slice(0, 24)}`
    expect(charges[0]!.processor_reference).toBe(expected)
    second.child.kill('SIGKILL')
  })

  it('when it gets SIGTERM with a charge in flight, then that charge completes and the process exits 0', async () => {
    const live = await server()
    const inFlight = charge(live.url, 'drain-1')
    await until(async () => (await keyRow('drain-1')) !== undefined)
    live.child.kill('SIGTERM')

    const response = await inFlight
    expect(response.status).toBe(201)
    expect(await live.exited).toBe(0)
    expect(live.output()).toContain('"msg":"stopped"')
    expect(await keyRow('drain-1')).toMatchObject({ claim_token: null })
  })
})
