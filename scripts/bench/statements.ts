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
        `${String(row.calls).padStart(9)} ${row.mean_ms.toFixed(3).padStart(7)} ${row.total_s.toFixed(1).padStart(6)} ${row.wal_bytes.toFixed(0).padStart(6)}  ${row.query.slice(0, 110)}`,
    ),
  ].join('\n')
}
