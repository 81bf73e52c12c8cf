// Committing what requests recorded together with their keys' completions: one statement for the requests
// that commit at the same moment, each fenced by its own claim's token.
import type { Sql } from '../db/connect.js'
import { arrayLiteral } from '../db/array-literal.js'
import { Batcher, type SharedStatements } from '../db/batcher.js'
import { columnArray, columnList, columnTypes, insertRow, type RowInsert } from '../db/row-insert.js'
import type { StoredResponse } from './response.js'
import { completion, isTakenOver, type Claim } from './store.js'

interface Commit {
  writes: RowInsert[]
  /** Null for a request sent without a key: its writes alone. */
  claim: Claim | null
  response: StoredResponse
}

// As for claims: a cap that keeps one statement, and the wait of the requests queued behind it, short.
const MAX_COMMITS_PER_STATEMENT = 50

/**
 * Commits what requests recorded together with their keys' completions. Commits that arrive while one statement
 * is in flight go out together in the next (src/db/batcher.ts): one statement and one commit for all of them.
 */
export class Commits {
  readonly #batches: Batcher<Commit, boolean>

  constructor(sql: Sql, statements: SharedStatements = {}) {
    this.#batches = new Batcher((commits) => commitStatement(sql, commits), {
      maxSize: MAX_COMMITS_PER_STATEMENT,
      ...statements,
    })
  }

  /**
   * Inserts `writes` and completes the key with `response`, atomically: false, with nothing written, when the
   * claim is no longer this holder's (its lease ran out and another request took the key over).
   */
  commit(writes: RowInsert[], claim: Claim | null, response: StoredResponse): Promise<boolean> {
    return this.#batches.submit({ writes, claim, response })
  }
}

/**
 * The commit of a batch of requests, in one statement. Each request's completion is an UPDATE fenced by its
 * token, and each of its rows is inserted only if that UPDATE matched (or it has no key): a request whose claim
 * was taken over writes nothing and is answered false, and the others commit. Rows are inserted table by table,
 * one array per column (src/db/row-insert.ts), so the statement's text depends only on the tables and columns
 * written.
 */
async function commitStatement(sql: Sql, commits: Commit[]): Promise<boolean[]> {
  const [only] = commits
  if (only && commits.length === 1) return [await commitOne(sql, only)]
  const claimed = commits.flatMap((commit, index) =>
    commit.claim ? [{ ord: index + 1, claim: commit.claim, response: commit.response }] : [],
  )
  const column = (value: (item: (typeof claimed)[number]) => string | number) => arrayLiteral(claimed.map(value))
  const groups = await Promise.all(
    rowsByTable(commits).map(async (group) => ({ ...group, types: await columnTypes(sql, group.table) })),
  )
  const writes = groups.map(
    ({ table, columns, ords, rows, types }, index) => sql`, ${sql.unsafe(`write_${index}`)} as (
      insert into ${sql(table)} (${columnList(sql, columns)})
      select ${columnList(sql, columns)}
      from unnest(${[
        columnArray(sql, 'integer', ords),
        ...columns.map((column) =>
          columnArray(
            sql,
            typeOf(types, table, column),
            rows.map((row) => row[column]),
          ),
        ),
      ].reduce((joined, array) => sql`${joined}, ${array}`)}) as w(write_ord, ${columnList(sql, columns)})
      where w.write_ord in (select ord from passed)
    )`,
  )
  const unclaimed = commits.flatMap((commit, index) => (commit.claim ? [] : [index + 1]))
  const rows = await sql<{ ord: number }[]>`
    with completion as (
      select * from unnest(
        ${column((c) => c.ord)}::int[], ${column((c) => c.claim.rowId)}::bigint[], ${column((c) => c.claim.token)}::text[],
        ${column((c) => c.response.status)}::int[], ${column((c) => JSON.stringify(c.response.headers))}::text[],
        ${column((c) => c.response.body.toString('base64'))}::text[]
      ) as c(ord, id, token, status, headers, body)
      limit ${claimed.length} -- see BATCH_ROWS_ESTIMATE in claims.ts
    ),
    completed as (
      update idempotency_keys k set
        claim_token = null, locked_until = null, completed_at = now(), request = null,
        response_status = c.status, response_headers = c.headers::jsonb, response_body = decode(c.body, 'base64'),
        expires_at = greatest(k.expires_at, now() + (k.expires_at - k.created_at))
      from completion c
      where k.id = c.id and k.claim_token = c.token::uuid
      returning c.ord
    ),
    passed as (select ord from completed union all select unnest(${arrayLiteral(unclaimed)}::int[]))
    ${writes.reduce((joined, write) => sql`${joined}${write}`, sql``)}
    select ord from passed`
  const passed = new Set(rows.map((row) => row.ord))
  return commits.map((_, index) => passed.has(index + 1))
}

/**
 * The commit of one request alone, in the statement a single request needs (measured alone, the batch statement
 * cost PostgreSQL 0.2 ms more per request): its inserts and its completion, each a WITH clause. The completion
 * (complete_idempotency_key) raises IK409 when the claim was taken over, and the whole statement rolls back.
 */
async function commitOne(sql: Sql, { writes, claim, response }: Commit): Promise<boolean> {
  const clauses = writes.map((write, index) => sql`${sql.unsafe(`write_${index}`)} as (${insertRow(sql, write)})`)
  const completed = sql`completion as (${claim ? completion(sql, claim, response) : sql`select`})`
  const withClauses = [...clauses, completed].reduce((joined, clause) => sql`${joined}, ${clause}`)
  try {
    await sql`with ${withClauses} select from completion`
    return true
  } catch (error) {
    if (isTakenOver(error)) return false
    throw error
  }
}

/**
 * The rows of a batch grouped by table and columns, each with the position (ord) of the request that wrote it.
 */
function rowsByTable(commits: Commit[]) {
  const groups = new Map<
    string,
    { table: string; columns: string[]; ords: number[]; rows: Record<string, unknown>[] }
  >()
  commits.forEach((commit, index) => {
    for (const { table, row } of commit.writes) {
      const columns = Object.keys(row)
      const id = `${table}(${columns.join(',')})`
      const group = groups.get(id) ?? { table, columns, ords: [], rows: [] }
      groups.set(id, group)
      group.ords.push(index + 1)
      group.rows.push(row)
    }
  })
  return [...groups.values()]
}

function typeOf(types: Map<string, string>, table: string, column: string): string {
  const type = types.get(column)
  if (!type) throw new Error(`${table} has no column ${column}`)
  return type
}
