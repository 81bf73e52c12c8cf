// npm run bench -- --statements: what PostgreSQL spent per statement during the run (pg_stat_statements), to
// see where database time and WAL go.
import type { Sql } from '../../src/db/connect.js'

export async function statementCosts(sql: Sql): Promise<string> {
  const rows = await sql<{ calls: string; mean_ms: number; total_s: number; wal_bytes: number; query: string }[]>`
    select calls, mean_exec_time as mean_ms, total_exec_time / 1000 as total_s,
           wal_bytes::float8 / greatest(calls, 1) as wal_bytes, regexp_replace(query, '\\s+', ' ', 'g') as query
    from pg_stat_statements order by total_exec_time desc limit 14`
  return [
    '',
    'PostgreSQL, per statement (pg_stat_statements): calls, mean ms, total s, WAL bytes per call',
    ...rows.map(
      (row) =>
        `${String(row.calls).padStart(9)} ${row.mean_ms.toFixed(3).padStart(7)} ` +
        `${row.total_s.toFixed(1).padStart(6)} ${row.wal_bytes.toFixed(0).padStart(6)}  ${row.query.slice(0, 110)}`,
    ),
  ].join('\n')
}

/**
 * Running totals of the whole cluster: statements executed (pg_stat_statements, BEGIN and COMMIT included) and
 * transaction ids handed out (one per transaction that writes, so one per commit that flushes WAL). Differences
 * over a measurement, divided by its requests, say how many of each a request costs.
 */
export async function databaseCounters(sql: Sql): Promise<{ statements: number; writeTransactions: number }> {
  const [row] = await sql<{ statements: number; xid: string }[]>`
    select (select coalesce(sum(calls), 0)::float8 from pg_stat_statements) as statements,
           pg_snapshot_xmax(pg_current_snapshot())::text as xid`
  return { statements: row!.statements, writeTransactions: Number(row!.xid) }
}
