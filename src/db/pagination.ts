// Keyset pagination for every list, newest first, on a table's insertion order (`seq`): a page after an item
// (starting_after) or before one (ending_before), within a window of creation times. A cursor must name an item of
// the same account (and of the same charge, for a charge's refunds); otherwise the page is undefined, and the
// route answers 400: a cursor never tells whether another account's id exists.
import type { Fragment } from 'postgres'
import type { PageRequest } from '../schemas/page.js'
import type { Sql } from './connect.js'

export interface Page<Row> {
  rows: Row[]
  hasMore: boolean
}

export async function pageOf<Row extends object>(
  sql: Sql,
  /** A table with `id`, `seq` (its insertion order), `created_at` and an index on (account_id, seq). */
  table: string,
  /** Which rows belong to the list (the account, and a charge for its refunds), as a WHERE condition. */
  scope: Fragment,
  page: PageRequest,
  columns: Fragment = sql`*`,
): Promise<Page<Row> | undefined> {
  const cursorId = page.startingAfter ?? page.endingBefore
  let cursor: string | null = null
  if (cursorId) {
    const [found] = await sql<{ seq: string }[]>`select seq from ${sql(table)} where id = ${cursorId} and ${scope}`
    if (!found) return undefined
    cursor = found.seq
  }
  const before = page.endingBefore !== undefined
  const { gt = null, gte = null, lt = null, lte = null } = page.created
  const rows = await sql<Row[]>`
    select ${columns} from ${sql(table)}
    where ${scope}
      and (${cursor}::bigint is null or ${before ? sql`seq > ${cursor}::bigint` : sql`seq < ${cursor}::bigint`})
      and (${gt}::timestamptz is null or created_at > ${gt}::timestamptz)
      and (${gte}::timestamptz is null or created_at >= ${gte}::timestamptz)
      and (${lt}::timestamptz is null or created_at < ${lt}::timestamptz)
      and (${lte}::timestamptz is null or created_at <= ${lte}::timestamptz)
    order by seq ${before ? sql`asc` : sql`desc`}
    limit ${page.limit + 1}`
  const pageRows = rows.slice(0, page.limit)
  return { rows: before ? pageRows.reverse() : pageRows, hasMore: rows.length > page.limit }
}
