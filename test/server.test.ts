// The server as a process: a crash mid-charge loses nothing and charges once; SIGTERM drains before exit.
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { createAccount } from '../src/accounts/api-keys.js'
import { contractFetch } from './helpers/contract.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'
import { startServer, type ServerProcess } from './helpers/processes.js'
import { until } from './helpers/system.js'

const databases: TestDatabase[] = []
const running: ServerProcess[] = []
afterAll(async () => {
  for (const server of running) server.child.kill('SIGKILL')
  await Promise.all(running.map((server) => server.exited))
  await Promise.all(databases.map((database) => database.drop()))
})

// The server is a child process: its answers are checked against openapi.yaml from outside.
const violations: string[] = []
afterEach(() => expect(violations.splice(0)).toEqual([]))

/** The simulated processor's reference for a charge made under `operationId`. */
const expectedReference = (operationId: string) =>
  `sim_ch_${createHash('sha256').update(operationId).digest('hex').slice(0, 24)}`

/**
 * A database of its own with an account, and the means to start servers on it and to read it. The tests of a
 * describe block run at once (they wait, mostly: on leases, slow processors, restarts; one after another this file
 * took 108 s), and each one's recovery workers must find only the claims that test abandoned.
 */
async function world() {
  const database = await createTestDatabase()
  databases.push(database)
  const { api_key: apiKey, account_id: accountId } = await createAccount(database.sql, 'Process tests')

  async function server(env: Record<string, string> = {}): Promise<ServerProcess> {
    const started = await startServer({
      DATABASE_URL: database.url,
      // Room for a loaded machine (two suites at once): a request that must answer 201 has 5 s, and the tests that
      // wait for a dead holder's lease to end wait on the database's clock, not on a margin.
      IDEMPOTENCY_LEASE_SECONDS: '5',
      REQUEST_TIMEOUT_MS: '5000',
      SIMULATED_SLOW_MS: '600',
      // The processor (here, queries on a loaded machine) gets 2.5 s; the worker's grace must outlast that.
      RECOVERY_GRACE_SECONDS: '3',
      PROCESSOR_TIMEOUT_MS: '2500',
      ...env,
    })
    running.push(started)
    return started
  }
  const post = (url: string, path: string, key: string, body: unknown) =>
    contractFetch(violations)(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
    })
  const keyRow = async (key: string) =>
    (
      await database.sql`select operation_id, claim_token, completed_at from idempotency_keys where account_id =
        ${accountId} and key = ${key}`
    )[0]
  return {
    database,
    apiKey,
    server,
    post,
    charge: (url: string, key: string, source = 'pm_card_slow') =>
      post(url, '/v1/charges', key, { amount_cents: 4200, currency: 'usd', source }),
    inLedger: async (operationId: string) =>
      (await database.sql`select 1 from simulated_processor.operations where idempotency_key = ${operationId}`)
        .length === 1,
    keyRow,
    /** Waits, on PostgreSQL's clock, until the key's lease has run out (its holder is dead). */
    leaseOver: (key: string) =>
      until(
        async () =>
          (
            await database.sql`select 1 from idempotency_keys where account_id = ${accountId} and key = ${key} and
              locked_until <= now()`
          ).length === 1,
      ),
    chargesOf: () => database.sql`select id, processor_reference from charges where account_id = ${accountId}`,
  }
}

describe('a port that is taken', () => {
  it('when PORT is taken, then the server says which setting to change, stops what it started, and exits 1', async () => {
    const { server } = await world()
    const taken = createServer().listen(0, '127.0.0.1')
    await once(taken, 'listening')
    const port = (taken.address() as AddressInfo).port
    try {
      const error = await server({ PORT: String(port) }).then(
        () => undefined,
        (reason: Error) => reason,
      )
      expect(error?.message).toContain('server exited with 1')
      expect(error?.message).toContain(
        `port ${port} on 127.0.0.1 is taken (another server?): stop it, or start with PORT=<another port>`,
      )
      expect(error?.message).not.toContain('    at ')
    } finally {
      taken.close()
    }
  })
})

describe.concurrent('the server process', () => {
  it('when it is killed mid-charge, then nothing is recorded, and the retry after the lease charges once with the same processor key', async () => {
    const { server, charge, keyRow, leaseOver, chargesOf } = await world()
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

    // The client's own retry comes within the recovery grace period, so it is the retry that settles the claim.
    const second = await server({ RECOVERY_GRACE_SECONDS: '60' })
    await leaseOver('crash-1') // the dead holder's lease runs out
    const retry = await charge(second.url, 'crash-1')

    expect(retry.status).toBe(201)
    const charges = await chargesOf()
    expect(charges).toHaveLength(1)
    // The processor was asked with the operation id of the first attempt, so a real one would have deduped it.
    expect(charges[0]!.processor_reference).toBe(expectedReference(abandoned!.operation_id))
    second.child.kill('SIGKILL')
  })

  it('when it is killed after the processor charged and before the commit, then the restarted service settles the charge by itself', async () => {
    const { database, server, charge, keyRow, inLedger, leaseOver } = await world()
    // The processor takes 5 s to answer; it is given 6 s (and the grace outlasts that, as the configuration requires).
    const first = await server({ SIMULATED_SLOW_MS: '5000', PROCESSOR_TIMEOUT_MS: '6000', RECOVERY_GRACE_SECONDS: '7' })
    const lost = charge(first.url, 'killed-after-charge').catch((error: unknown) => error)
    await until(async () => (await keyRow('killed-after-charge')) !== undefined)
    const { operation_id: operationId } = (await keyRow('killed-after-charge'))!
    await until(() => inLedger(operationId)) // the money moved
    first.child.kill('SIGKILL')
    await first.exited
    await lost
    expect(
      await database.sql`select 1 from charges where processor_reference = ${expectedReference(operationId)}`,
    ).toHaveLength(0)
    await leaseOver('killed-after-charge') // the dead holder's lease runs out

    const second = await server()
    // Nobody retries: the restarted worker settles it (margins for a loaded machine: the restart compiles and
    // migrates).
    await until(async () => (await keyRow('killed-after-charge'))?.completed_at != null, 60_000)
    const [settled] =
      await database.sql`select id from charges where processor_reference = ${expectedReference(operationId)}`
    expect(settled).toBeDefined()
    const retry = await charge(second.url, 'killed-after-charge')
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(((await retry.json()) as { id: string }).id).toBe(settled!.id)
    second.child.kill('SIGKILL')
  }, 120_000)

  it('when it is killed after the processor refunded and before the commit, then the restarted service settles the refund by itself', async () => {
    const { database, server, post, charge, keyRow, inLedger, leaseOver } = await world()
    const first = await server({ SIMULATED_SLOW_MS: '3000', PROCESSOR_TIMEOUT_MS: '4000', RECOVERY_GRACE_SECONDS: '5' })
    // A pm_card_slow charge: its refunds answer slowly too. The client gives up; the charge commits anyway.
    await charge(first.url, 'slow-charge').catch(() => {})
    await until(async () => (await keyRow('slow-charge'))?.completed_at != null, 60_000)
    const chargeId = ((await (await charge(first.url, 'slow-charge')).json()) as { id: string }).id
    const lost = post(first.url, `/v1/charges/${chargeId}/refunds`, 'killed-refund', { amount_cents: 1000 }).catch(
      (error: unknown) => error,
    )
    await until(async () => (await keyRow('killed-refund')) !== undefined)
    const { operation_id: refundOperation } = (await keyRow('killed-refund'))!
    await until(() => inLedger(refundOperation))
    first.child.kill('SIGKILL')
    await first.exited
    await lost
    expect(await database.sql`select status from refunds where charge_id = ${chargeId}`).toEqual([
      { status: 'pending' },
    ])
    await leaseOver('killed-refund')

    const second = await server()
    await until(async () => (await keyRow('killed-refund'))?.completed_at != null, 60_000)
    expect(await database.sql`select status from refunds where charge_id = ${chargeId}`).toEqual([
      { status: 'succeeded' },
    ])
    const [row] =
      await database.sql`select amount_refunded_cents, amount_refund_pending_cents from charges where id = ${chargeId}`
    expect(row).toEqual({ amount_refunded_cents: 1000, amount_refund_pending_cents: 0 })
    second.child.kill('SIGKILL')
  }, 150_000)

  it('when it gets SIGTERM with a charge in flight, then that charge completes and the process exits 0', async () => {
    const { server, charge, keyRow } = await world()
    // The request's deadline is not what this is about: room for a loaded machine (a lease outlasts a deadline).
    const live = await server({ REQUEST_TIMEOUT_MS: '10000', IDEMPOTENCY_LEASE_SECONDS: '10' })
    const inFlight = charge(live.url, 'drain-1')
    await until(async () => (await keyRow('drain-1')) !== undefined)
    live.child.kill('SIGTERM')

    const response = await inFlight
    expect(response.status).toBe(201)
    expect(await live.exited).toBe(0)
    expect(live.output()).toContain('"msg":"stopped"')
    // On start it said where it listens, which database it uses (no password), and how to get a key.
    expect(live.output()).toMatch(
      /"msg":"ready \(all\): http:\/\/127\.0\.0\.1:\d+; get an API key with: npm run --silent account:create/,
    )
    expect(live.output()).toMatch(/"msg":"database: postgres:\/\/postgres@127\.0\.0\.1:\d+\/payments_test_/)
    expect(await keyRow('drain-1')).toMatchObject({ claim_token: null })
  })
})

describe.concurrent('webhook URLs on this machine', () => {
  const endpoint = (url: string, apiKey: string) =>
    fetch(`${url}/v1/webhook_endpoints`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        'idempotency-key': crypto.randomUUID(),
      },
      body: JSON.stringify({ url: 'http://127.0.0.1:4000/webhooks', enabled_events: ['*'] }),
    })

  it('when a deployment names its database (DATABASE_URL) and says nothing of private URLs, then a loopback endpoint is refused', async () => {
    const { apiKey, server } = await world()
    const deployed = await server()
    const response = await endpoint(deployed.url, apiKey)
    expect(response.status).toBe(400)
    expect(((await response.json()) as { type: string }).type).toMatch(/webhook-url-refused$/)
  })

  it('when it says WEBHOOK_ALLOW_PRIVATE_URLS=true, then the same endpoint is made', async () => {
    const { apiKey, server } = await world()
    const local = await server({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' })
    expect((await endpoint(local.url, apiKey)).status).toBe(201)
  })
})
