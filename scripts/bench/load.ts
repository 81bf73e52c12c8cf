// The load itself: autocannon over HTTP for throughput and latency, and bursts for duplicates of one key.
import { randomUUID } from 'node:crypto'
import autocannon from 'autocannon'
import type { Sql } from '../../src/db/connect.js'
import { clusterCpuMs, cpuMs, rssMb, type ServerUnderTest } from './processes.js'
import { databaseCounters } from './statements.js'

export const CHARGE_BODY = JSON.stringify({ amount_cents: 1200, currency: 'usd', source: 'pm_card_visa' })

export interface Measurement {
  rps: number
  p50: number
  p99: number
  /** CPU per request, in ms: the server process, and PostgreSQL (all its backends). */
  nodeMs: number
  pgMs: number
  /** Per request: statements PostgreSQL ran (pg_stat_statements) and transactions that wrote (new transaction ids). */
  statements: number
  commits: number
  rssMb: number
  /** Responses that were not the expected status. */
  unexpected: number
}

export interface LoadOptions {
  apiKey: string
  seconds: number
  connections: number
  postmasterPid: number
  /** The bench's own connection to the database, to read its counters. */
  sql: Sql
}

/** Runs one scenario against one server: `key` fixed for replays, or a fresh key for every request. */
export async function measure(server: ServerUnderTest, options: LoadOptions, key?: string): Promise<Measurement> {
  const headers = { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json', 'idempotency-key': key ?? 'unused' }
  const [nodeBefore, pgBefore, countersBefore] = [await cpuMs(server.pid), await clusterCpuMs(options.postmasterPid), await databaseCounters(options.sql)]
  const result = await autocannon({
    url: `${server.url}/v1/charges`,
    connections: options.connections,
    duration: options.seconds,
    requests: [
      {
        method: 'POST',
        headers,
        body: CHARGE_BODY,
        ...(key === undefined && {
          setupRequest: (request) => ({ ...request, headers: { ...request.headers, 'idempotency-key': randomUUID() } }),
        }),
      },
    ],
  })
  const [nodeAfter, pgAfter, countersAfter] = [await cpuMs(server.pid), await clusterCpuMs(options.postmasterPid), await databaseCounters(options.sql)]
  const total = result.requests.total || 1
  return {
    rps: total / options.seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    nodeMs: (nodeAfter - nodeBefore) / total,
    pgMs: (pgAfter - pgBefore) / total,
    statements: (countersAfter.statements - countersBefore.statements) / total,
    commits: (countersAfter.writeTransactions - countersBefore.writeTransactions) / total,
    rssMb: await rssMb(server.pid),
    unexpected: result.non2xx + result.errors + result.timeouts,
  }
}

/** Time until all of `keys` (sent at once) are answered, and how many of the answers were 409s. */
export async function burst(server: ServerUnderTest, apiKey: string, keys: string[]): Promise<{ ms: number; conflicts: number }> {
  const started = performance.now()
  const statuses = await Promise.all(
    keys.map(async (key) => {
      const response = await fetch(`${server.url}/v1/charges`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: CHARGE_BODY,
      })
      await response.arrayBuffer()
      return response.status
    }),
  )
  return { ms: performance.now() - started, conflicts: statuses.filter((status) => status === 409).length }
}
