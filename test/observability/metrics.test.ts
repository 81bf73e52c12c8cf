// Prometheus metrics, scraped from the real server on its own port and read with a real text-format parser.
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAccount } from '../../src/accounts/api-keys.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { startServer, type ServerProcess } from '../helpers/processes.js'
import { freePort } from '../helpers/system.js'

let database: TestDatabase
let server: ServerProcess
let metricsUrl: string
let apiKey: string

beforeAll(async () => {
  database = await createTestDatabase()
  ;({ api_key: apiKey } = await createAccount(database.sql, 'Metrics'))
  const metricsPort = await freePort()
  server = await startServer({ DATABASE_URL: database.url, METRICS_PORT: String(metricsPort) })
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`
})
afterAll(async () => {
  server?.child.kill('SIGKILL')
  await database.drop()
})

async function scrape() {
  const response = await fetch(metricsUrl)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
  return parsePrometheusTextFormat(await response.text())
}

function value(families: Awaited<ReturnType<typeof scrape>>, name: string, labels: Record<string, string>): number {
  const family = families.find((candidate) => candidate.name === name)
  const sample = family?.metrics.find((metric) =>
    Object.entries(labels).every(([label, wanted]) => metric.labels?.[label] === wanted),
  )
  return Number(sample?.value ?? sample?.count ?? 0)
}

const charge = (key: string, source = 'pm_card_visa') =>
  fetch(`${server.url}/v1/charges`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ amount_cents: 990, currency: 'usd', source }),
  })

describe('GET /metrics on METRICS_PORT', () => {
  it('when a charge is replayed, then the replay counter moves by one, and requests, processor calls and the pool are reported', async () => {
    expect((await charge('metrics-1')).status).toBe(201)
    const before = await scrape()
    const replay = await charge('metrics-1')
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    const after = await scrape()

    const replays = {
      name: 'idempotency_outcomes_total',
      labels: { endpoint: 'POST /v1/charges', outcome: 'replayed' },
    }
    expect(value(after, replays.name, replays.labels) - value(before, replays.name, replays.labels)).toBe(1)
    expect(
      value(after, 'idempotency_outcomes_total', { endpoint: 'POST /v1/charges', outcome: 'claimed' }),
    ).toBeGreaterThanOrEqual(1)
    expect(value(after, 'http_requests_total', { route: '/v1/charges', method: 'POST', status: '201' })).toBe(2)
    // The parser keeps a histogram's buckets (not its labels): the duration of those requests is counted there.
    const durations = after.find((family) => family.name === 'http_request_duration_seconds')!
    expect(durations.type).toBe('HISTOGRAM')
    expect(Number(durations.metrics[0]!.buckets!['+Inf'])).toBeGreaterThanOrEqual(2)
    expect(after.find((family) => family.name === 'processor_call_duration_seconds')?.type).toBe('HISTOGRAM')
    const pool = after.find((family) => family.name === 'db_pool_connections')!
    expect(pool.type).toBe('GAUGE')
    // postgres.js's own sql.stats: connections open, of which idle or leased (a transaction, a reserved one), opening,
    // and queries waiting for one.
    expect(pool.metrics.map((metric) => metric.labels?.state).sort()).toEqual([
      'connections',
      'idle',
      'leased',
      'opening',
      'waiting',
    ])
    for (const name of [
      'reaper_deleted_keys_total',
      'recovery_claims_total',
      'worker_job_failures_total',
      'process_cpu_seconds_total',
    ]) {
      expect(after.map((family) => family.name)).toContain(name)
    }
  })

  it('when an API client asks the API port for /metrics, then it is not there', async () => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404)
  })
})
