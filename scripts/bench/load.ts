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
  /**
   * WAL per request, in bytes, the whole cluster's over the measurement (pg_walinspect): all, full-page images, b-tree
   * records.
   */
  walBytes: number
  fpiBytes: number
  btreeBytes: number
  /** WAL per request by relation (its heap and each index apart), and `commits`. */
  walByRelation: Record<string, number>
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
  const headers = {
    authorization: `Bearer ${options.apiKey}`,
    'content-type': 'application/json',
    'idempotency-key': key ?? 'unused',
  }
  const [nodeBefore, pgBefore, countersBefore, walBefore] = [
    await cpuMs(server.pid),
    await clusterCpuMs(options.postmasterPid),
    await databaseCounters(options.sql),
    await walPosition(options.sql),
  ]
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
  const [nodeAfter, pgAfter, countersAfter] = [
    await cpuMs(server.pid),
    await clusterCpuMs(options.postmasterPid),
    await databaseCounters(options.sql),
  ]
  const total = result.requests.total || 1
  const wal = await walBetween(options.sql, walBefore, await walPosition(options.sql))
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
    walBytes: wal.all / total,
    fpiBytes: wal.fpi / total,
    btreeBytes: wal.btree / total,
    walByRelation: Object.fromEntries(
      Object.entries(wal.byRelation).map(([relation, bytes]) => [relation, bytes / total]),
    ),
  }
}

async function walPosition(sql: Sql): Promise<string> {
  const [row] = await sql<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`
  return row!.lsn
}

interface WalWritten {
  all: number
  fpi: number
  btree: number
  /**
   * Each relation's records (a record counts for the first block it changes), and `commits` for transaction records.
   */
  byRelation: Record<string, number>
}

/**
 * The WAL written between two positions, by pg_walinspect: every record, the full-page images in them, b-tree records,
 * and by relation.
 */
async function walBetween(sql: Sql, from: string, to: string): Promise<WalWritten> {
  if (from === to) return { all: 0, fpi: 0, btree: 0, byRelation: {} }
  const [row] = await sql<{ all: number; fpi: number; btree: number; commits: number }[]>`
    select coalesce(sum(combined_size), 0)::float8 as all, coalesce(sum(fpi_size), 0)::float8 as fpi,
           coalesce(sum(combined_size) filter (where "resource_manager/record_type" = 'Btree'), 0)::float8 as btree,
           coalesce(sum(combined_size) filter (where "resource_manager/record_type" = 'Transaction'), 0)::float8 as
             commits
    from pg_get_wal_stats(${from}::pg_lsn, ${to}::pg_lsn)`
  const relations = await sql<{ relation: string; bytes: number }[]>`
    with names as (select pg_relation_filenode(oid) as filenode, relname::text from pg_class where
      pg_relation_filenode(oid) is not null)
    select coalesce(names.relname, 'other') as relation, sum(block.record_length)::float8 as bytes
    from pg_get_wal_block_info(${from}::pg_lsn, ${to}::pg_lsn, false) block left join names on names.filenode =
      block.relfilenode
    where block.block_id = 0
    group by 1`
  const byRelation = Object.fromEntries(relations.map((relation) => [relation.relation, relation.bytes]))
  return { ...row!, byRelation: { ...byRelation, commits: row!.commits } }
}

/** Time until all of `keys` (sent at once) are answered, and how many of the answers were 409s. */
export async function burst(
  server: ServerUnderTest,
  apiKey: string,
  keys: string[],
): Promise<{ ms: number; conflicts: number }> {
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
