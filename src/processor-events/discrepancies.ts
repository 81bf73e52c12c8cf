// Where the books and the processor disagree, kept for an operator (npm run reconcile:report), counted on a metric
// and logged once when found. Never acted on: money that disagrees is a person's decision. A disagreement that a
// later comparison no longer finds is marked resolved; one the comparison cannot look at again is resolved by hand.
import type { Logger } from 'pino'
import type { Sql } from '../db/connect.js'
import { reconciliationDiscrepancies } from '../observability/metrics.js'
import { theRow } from '../db/rows.js'

export interface Discrepancy {
  /** What disagrees: payment_differs, payment_missing_at_processor, payment_not_in_books, refund_…, event_waiting. */
  kind: string
  /** The books' id where there is one (ch_…, re_…), else the processor's (pi_…) or its event's. */
  reference: string
  accountId: string | null
  detail: string
  books: unknown
  processor: unknown
}

export interface DiscrepancyRow extends Discrepancy {
  id: number
  detected_at: Date
  last_seen_at: Date
  resolved_at: Date | null
}

/** Records what the comparison found; a disagreement still open is seen again, not found anew. Returns the new ones. */
export async function recordDiscrepancies(sql: Sql, found: Discrepancy[], log: Logger): Promise<number> {
  let fresh = 0
  for (const each of found) {
    const [row] = await sql<{ inserted: boolean }[]>`
      insert into reconciliation_discrepancies (kind, reference, account_id, detail, books, processor)
      values (${each.kind}, ${each.reference}, ${each.accountId}, ${each.detail.slice(0, 1000)},
        ${sql.json((each.books ?? null) as never)}, ${sql.json((each.processor ?? null) as never)})
      on conflict (kind, reference) where resolved_at is null
      do update set last_seen_at = now(), detail = excluded.detail, books = excluded.books, processor =
        excluded.processor
      returning (xmax = 0) as inserted`
    if (row?.inserted) {
      fresh++
      log.error(
        { discrepancy: each },
        `the books and the processor disagree (${each.kind}, ${each.reference}): ${each.detail}`,
      )
    }
  }
  return fresh
}

/** Marks resolved the open disagreements of these kinds about these references: compared again, they agree. */
export async function resolveDiscrepancies(sql: Sql, kinds: string[], references: string[]): Promise<void> {
  if (references.length === 0) return
  await sql`
    update reconciliation_discrepancies set resolved_at = now()
    where resolved_at is null and kind = any(${kinds}) and reference = any(${references})`
}

/** By an operator, once they have looked at it (npm run reconcile:report -- --resolve <id>). */
export async function resolveDiscrepancy(sql: Sql, id: number): Promise<boolean> {
  const resolved =
    await sql`update reconciliation_discrepancies set resolved_at = now() where id = ${id} and resolved_at is null`
  return resolved.count === 1
}

export async function listDiscrepancies(
  sql: Sql,
  options: { includeResolved?: boolean } = {},
): Promise<DiscrepancyRow[]> {
  return sql<DiscrepancyRow[]>`
    select id, kind, reference, account_id as "accountId", detail, books, processor, detected_at, last_seen_at,
      resolved_at
    from reconciliation_discrepancies ${options.includeResolved ? sql`` : sql`where resolved_at is null`}
    order by id`
}

/** Sets the gauge an alert watches. */
export async function countOpenDiscrepancies(sql: Sql): Promise<number> {
  const { count } = theRow(
    await sql<{ count: number }[]>`
      select count(*)::int as count from reconciliation_discrepancies where resolved_at is null`,
    'a count',
  )
  reconciliationDiscrepancies.set(count)
  return count
}
