// How far behind settlement is: abandoned claims that are due (their lease ended, then their grace period, longer
// after each failed attempt, as the recovery worker waits) and that no recovery run has taken yet. A run takes a
// claim by moving its lease, so a claim stays overdue only while no run reaches it: the recovery queue stalled,
// every worker down, or more claims than a run settles in its time.
import type { Sql } from '../db/connect.js'
import { theRow } from '../db/rows.js'
import { dueAt } from '../idempotency/abandoned-claims.js'

export interface SettlementBacklog {
  overdue: number
  /** How long past its due time the oldest overdue claim is; 0 when none is. */
  oldestSeconds: number
}

export async function settlementBacklog(
  sql: Sql,
  endpoints: string[],
  graceSeconds: number,
): Promise<SettlementBacklog> {
  if (endpoints.length === 0) return { overdue: 0, oldestSeconds: 0 }
  const rows = await sql<{ overdue: number; oldest_seconds: number | null }[]>`
    select count(*)::int as overdue, extract(epoch from now() - min(due))::float8 as oldest_seconds
    from (
      select ${dueAt(sql, graceSeconds)} as due
      from idempotency_keys
      where completed_at is null and locked_until < now() and endpoint = any(${endpoints})
    ) as claims
    where due < now()`
  const row = theRow(rows, 'a count')
  return { overdue: row.overdue, oldestSeconds: row.oldest_seconds ?? 0 }
}
