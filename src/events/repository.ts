// Reading events back, as the bytes they were written as.
import type { Sql } from '../db/connect.js'

export async function findEventBody(sql: Sql, accountId: string, eventId: string): Promise<string | undefined> {
  const [row] = await sql<{ body: string }[]>`select body from events where id = ${eventId} and account_id = ${accountId}`
  return row?.body
}

/** Newest first, optionally of one type. `startingAfter` must be an event of the same account, or the page is undefined. */
export async function listEventBodies(
  sql: Sql,
  accountId: string,
  page: { limit: number; startingAfter?: string | undefined; type?: string | undefined },
): Promise<{ bodies: string[]; hasMore: boolean } | undefined> {
  let cursor: string | null = null
  if (page.startingAfter) {
    const [found] = await sql<{ seq: string }[]>`select seq from events where id = ${page.startingAfter} and account_id = ${accountId}`
    if (!found) return undefined
    cursor = found.seq
  }
  const rows = await sql<{ body: string }[]>`
    select body from events
    where account_id = ${accountId}
      and (${cursor}::bigint is null or seq < ${cursor}::bigint)
      and (${page.type ?? null}::text is null or type = ${page.type ?? null})
    order by seq desc
    limit ${page.limit + 1}`
  return { bodies: rows.slice(0, page.limit).map((row) => row.body), hasMore: rows.length > page.limit }
}
