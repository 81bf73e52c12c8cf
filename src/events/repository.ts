// Reading events back, as the bytes they were written as.
import type { Sql } from '../db/connect.js'
import { pageOf, type Page } from '../db/pagination.js'
import type { PageRequest } from '../schemas/page.js'

export async function findEventBody(sql: Sql, accountId: string, eventId: string): Promise<string | undefined> {
  const [row] = await sql<
    { body: string }[]
  >`select body from events where id = ${eventId} and account_id = ${accountId}`
  return row?.body
}

/** Newest first, optionally of one type (src/db/pagination.ts). */
export async function listEventBodies(
  sql: Sql,
  accountId: string,
  page: PageRequest,
  type?: string,
): Promise<Page<string> | undefined> {
  const scope = type ? sql`account_id = ${accountId} and type = ${type}` : sql`account_id = ${accountId}`
  const found = await pageOf<{ body: string }>(sql, 'events', scope, page, sql`body`)
  return found && { rows: found.rows.map((row) => row.body), hasMore: found.hasMore }
}
