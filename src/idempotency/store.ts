// The SQL of idempotency keys: claim a key, complete it inside the caller's transaction, or release it.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Sql, Transaction } from '../db/connect.js'
import { arrayLiteral } from '../db/array-literal.js'
import { Batcher } from '../db/batcher.js'
import { send } from '../db/pipeline.js'
import { columnList, type RowInsert } from '../db/row-insert.js'
import { RECOVER_TASK } from './recovery.js'
import type { StoredResponse } from './response.js'

export interface KeyScope {
  accountId: string
  /** Method and route pattern, e.g. "POST /v1/charges": keys never cross endpoints or tenants. */
  endpoint: string
  key: string
}

export interface Claim {
  rowId: string
  /** Fences completion: only the request holding the current token can complete or release the key. */
  token: string
  /** Stable across takeovers: the idempotency key to hand to the payment processor. */
  operationId: string
}

export type ClaimResult =
  /**
   * `inherited`: the claim took over an unsettled key, keeping its operation id, so the operation may already be
   * downstream (its earlier holder may have called out before it crashed or timed out): whatever this request
   * does, it must not forget the operation as if it had never been sent.
   */
  | { outcome: 'claimed'; claim: Claim; takenOver: boolean; inherited: boolean }
  /**
   * `expiresInMs`: how long the key had left, as PostgreSQL counted it, at the latest at `askedAt` (both clocks,
   * read before the statement was sent: a process that stalls after the answer cannot stretch the lifetime).
   */
  | { outcome: 'completed'; response: StoredResponse; expiresInMs?: number; askedAt?: { monotonic: number; wall: number } }
  | { outcome: 'in-flight' }
  | { outcome: 'fingerprint-mismatch' }

export interface Timing {
  ttlSeconds: number
  leaseSeconds: number
  /** How long after a lease ends the recovery worker steps in (see src/recovery). */
  recoveryGraceSeconds: number
}

// A claim races only with a release, a takeover or an expiry between two statements; a few rounds settle it.
const CLAIM_ROUNDS = 3
// A duplicate that finds its twin still running looks again a few times, for 150 ms in all, before it answers
// 409: a request that is committing finishes in milliseconds, and its duplicates then replay instead of failing.
const IN_FLIGHT_WAITS_MS = [5, 10, 20, 35, 80]

interface KeyRow {
  inserted: boolean
  id: string
  operation_id: string
  fingerprint: Buffer | null
  claim_token: string | null
  expired: boolean
  expires_in_ms: number | null
  lease_over: boolean
  completed_at: Date | null
  response_status: number | null
  response_headers: Record<string, string> | null
  response_body: Buffer | null
}

// BATCH_ROWS_ESTIMATE. The batch statements are prepared, and PostgreSQL may keep one generic plan for them for
// the life of a connection. In a generic plan it guesses that unnest() of an array parameter yields 10 rows, and
// for 10 rows a hash join over a full scan of the key table is the cheaper plan while that table is small: a
// fresh deployment's, or the benchmark's. The plan is kept as the table grows, and a claim then scanned 100,000
// rows (measured: 1.4 ms per statement instead of 0.1). A LIMIT by a parameter makes it guess one row of
// input, as for a single request's statement, so the plan probes the unique index once per request, as soon
// as the table is a few pages long.

interface ClaimAttempt {
  scope: KeyScope
  fingerprint: Buffer
  token: string
  /** The validated request, as JSON text, kept for the recovery worker; null when the endpoint is not recovered. */
  request: string | null
}

// The most claims one statement carries. Twenty connections rarely queue more; the cap keeps a burst's statement
// (and the time its first request waits) short.
const MAX_CLAIMS_PER_STATEMENT = 50

/**
 * Claims keys for requests, or says why not. Claims that arrive while one statement is in flight go out together
 * in the next (src/db/batcher.ts): one statement and one commit for all of them.
 */
export class KeyClaims {
  readonly #sql: Sql
  readonly #timing: Timing
  readonly #batches: Batcher<ClaimAttempt, KeyRow | undefined>

  constructor(sql: Sql, timing: Timing, onBatch?: (size: number) => void) {
    this.#sql = sql
    this.#timing = timing
    this.#batches = new Batcher((attempts) => claimStatement(sql, timing, attempts), { maxSize: MAX_CLAIMS_PER_STATEMENT, onBatch })
  }

  /**
   * Claims the key for this request, or says why not. One statement finds out: it inserts a new claim, or, when
   * the key exists, reads it without writing (no lock, no transaction id), so replays, 409s and 422s cost a read.
   * Only an expired completed key or a claim abandoned by its holder is taken over, by a second, conditional
   * UPDATE; a claim whose lease is still running is never taken. An unsettled key never expires: its operation
   * may be downstream, so it stays bound to its request until a retry or the recovery worker settles it.
   */
  async claim(
    scope: KeyScope,
    fingerprint: Buffer,
    /** Kept with the claim when the endpoint can be recovered: the validated request, to settle it without its client. */
    request: unknown = null,
  ): Promise<ClaimResult> {
    const waits = [...IN_FLIGHT_WAITS_MS]
    const requestJson = request === null ? null : JSON.stringify(request)
    for (let round = 0; round < CLAIM_ROUNDS; round++) {
      const token = randomUUID()
      const askedAt = { monotonic: performance.now(), wall: Date.now() }
      const row = await this.#batches.submit({ scope, fingerprint, token, request: requestJson })
      // The key was inserted by a transaction that committed after this statement's snapshot (or by a twin in the
      // same statement): look again.
      if (!row) continue
      if (row.inserted) return { outcome: 'claimed', claim: { rowId: row.id, token, operationId: row.operation_id }, takenOver: false, inherited: false }

      const sameRequest = row.fingerprint!.equals(fingerprint)
      const unsettled = row.completed_at === null
      if (unsettled) {
        // Bound to its request, expired or not: another body would orphan an operation that may be downstream.
        if (!sameRequest) return { outcome: 'fingerprint-mismatch' }
        // A running claim is never taken over: the key is busy until its holder lets go or its lease ends.
        if (!row.lease_over) {
          const wait = waits.shift()
          if (wait === undefined) return { outcome: 'in-flight' }
          await sleep(wait)
          round--
          continue
        }
      } else if (!row.expired) {
        if (!sameRequest) return { outcome: 'fingerprint-mismatch' }
        const response = { status: row.response_status!, headers: row.response_headers!, body: row.response_body! }
        return { outcome: 'completed', response, expiresInMs: row.expires_in_ms!, askedAt }
      }
      const operationId = await takeOver(this.#sql, row, fingerprint, token, this.#timing, request)
      if (operationId) return { outcome: 'claimed', claim: { rowId: row.id, token, operationId }, takenOver: true, inherited: unsettled }
    }
    return { outcome: 'in-flight' }
  }
}

/**
 * The claim of a batch of requests, one row each, answered in their order. Read first: a key that exists (a
 * replay, a 409, a 422) has no row to insert, so for it the statement is a plain index read. Against inserting
 * with ON CONFLICT DO NOTHING first, measured with npm run bench: a replay's database time per request 0.28 ->
 * 0.16 ms, new claims unchanged. New keys are inserted in key order, so that two instances' batches wait for
 * each other's uncommitted keys in one order and never deadlock. An answer is missing (undefined) when the key
 * was inserted after the statement's snapshot, by another statement or by a twin earlier in this one.
 */
async function claimStatement(sql: Sql, timing: Timing, attempts: ClaimAttempt[]): Promise<(KeyRow | undefined)[]> {
  const column = (value: (attempt: ClaimAttempt) => string | null) => arrayLiteral(attempts.map(value))
  const rows = await sql<(KeyRow & { ord: string })[]>`
    with input as (
      select * from unnest(
        ${column((a) => a.scope.accountId)}::text[], ${column((a) => a.scope.endpoint)}::text[], ${column((a) => a.scope.key)}::text[],
        ${column((a) => a.fingerprint.toString('hex'))}::text[], ${column((a) => a.token)}::text[], ${column((a) => a.request)}::text[]
      ) with ordinality as i(account_id, endpoint, key, fingerprint, token, request, ord)
      limit ${attempts.length} -- see BATCH_ROWS_ESTIMATE
    ),
    existing as (
      select i.ord, k.id, k.operation_id, k.fingerprint, k.claim_token, k.expires_at <= now() as expired,
             extract(epoch from k.expires_at - now())::float8 * 1000 as expires_in_ms,
             coalesce(k.locked_until <= now(), false) as lease_over, k.completed_at, k.response_status, k.response_headers, k.response_body
      from input i
      -- A probe of the unique index per request, whatever the table's size when the plan was made (LIMIT keeps the
      -- subquery a nested loop: as a join, a plan made while the table was tiny hashes a full scan of it).
      cross join lateral (
        select * from idempotency_keys k
        where k.account_id = i.account_id and k.endpoint = i.endpoint and k.key = i.key
        limit 1
      ) k
    ),
    inserted as (
      insert into idempotency_keys
        (account_id, endpoint, key, fingerprint, operation_id, claim_token, locked_until, expires_at, request)
      select i.account_id, i.endpoint, i.key, decode(i.fingerprint, 'hex'), gen_random_uuid(), i.token::uuid,
             now() + ${timing.leaseSeconds} * interval '1 second', now() + ${timing.ttlSeconds} * interval '1 second', i.request::jsonb
      from input i
      where not exists (select from existing e where e.ord = i.ord)
      order by i.account_id, i.endpoint, i.key
      on conflict (account_id, endpoint, key) do nothing
      returning id, operation_id, claim_token
    )
    select i.ord, true as inserted, n.id, n.operation_id, null::bytea as fingerprint, null::uuid as claim_token,
           false as expired, null::float8 as expires_in_ms, false as lease_over, null::timestamptz as completed_at,
           null::smallint as response_status, null::jsonb as response_headers, null::bytea as response_body
    from inserted n join input i on i.token::uuid = n.claim_token
    union all
    select ord, false, id, operation_id, fingerprint, claim_token, expired, expires_in_ms, lease_over, completed_at,
           response_status, response_headers, response_body
    from existing`
  const answers: (KeyRow | undefined)[] = new Array(attempts.length)
  for (const row of rows) answers[Number(row.ord) - 1] = row
  return answers
}

/**
 * Takes over an expired completed key (a new request: new operation, new expiry, old response dropped) or an
 * unsettled claim whose holder's lease ran out, with the same request (a crash, a lost answer: same operation id,
 * so the processor dedupes). The WHERE repeats both conditions and the token that was read, so of two racing
 * takeovers exactly one wins. A completed key is never changed before it expires: the replay cache
 * (replay-cache.ts) relies on that.
 */
async function takeOver(sql: Sql, row: KeyRow, fingerprint: Buffer, token: string, timing: Timing, request: unknown): Promise<string | undefined> {
  const [taken] = await sql<{ operation_id: string }[]>`
    update idempotency_keys as k set
      fingerprint = ${fingerprint},
      request = ${request === null ? null : sql.json(request as never)},
      recovery_attempts = 0,
      claim_token = ${token},
      locked_until = now() + ${timing.leaseSeconds} * interval '1 second',
      operation_id = case when k.completed_at is null then k.operation_id else gen_random_uuid() end,
      created_at = case when k.completed_at is null then k.created_at else now() end,
      expires_at = case when k.completed_at is null then k.expires_at else now() + ${timing.ttlSeconds} * interval '1 second' end,
      completed_at = null, response_status = null, response_headers = null, response_body = null
    where k.id = ${row.id}
      and k.claim_token is not distinct from ${row.claim_token}
      and ((k.completed_at is not null and k.expires_at <= now())
           or (k.completed_at is null and k.locked_until <= now() and k.fingerprint = ${fingerprint}))
    returning k.operation_id`
  return taken?.operation_id
}

/**
 * Records the response in the transaction that made the handler's writes, so both commit or neither does. It is
 * sent without waiting (the transaction is one pipeline): if the claim was taken over meanwhile (our lease ran
 * out), the statement fails with IK409, which aborts the transaction; see isTakenOver.
 */
export function completeClaim(tx: Transaction, claim: Claim, response: StoredResponse): void {
  send(tx, completion(tx, claim, response))
}

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

  constructor(sql: Sql, onBatch?: (size: number) => void) {
    this.#batches = new Batcher((commits) => commitStatement(sql, commits), { maxSize: MAX_COMMITS_PER_STATEMENT, onBatch })
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
 * read from JSON (src/db/row-insert.ts), so the statement's text depends only on the tables and columns written.
 */
async function commitStatement(sql: Sql, commits: Commit[]): Promise<boolean[]> {
  const claimed = commits.flatMap((commit, index) => (commit.claim ? [{ ord: index + 1, claim: commit.claim, response: commit.response }] : []))
  const column = (value: (item: (typeof claimed)[number]) => string | number) => arrayLiteral(claimed.map(value))
  const writes = rowsByTable(commits).map(
    ({ table, columns, ords, rows }, index) => sql`, ${sql.unsafe(`write_${index}`)} as (
      insert into ${sql(table)} (${columnList(sql, columns)})
      select ${columnList(sql, columns)}
      from unnest(${arrayLiteral(ords)}::int[], ${arrayLiteral(rows)}::text[]) as w(write_ord, write_row)
      cross join lateral jsonb_populate_record(null::${sql(table)}, w.write_row::jsonb)
      where w.write_ord in (select ord from passed)
    )`,
  )
  const unclaimed = commits.flatMap((commit, index) => (commit.claim ? [] : [index + 1]))
  const rows = await sql<{ ord: number }[]>`
    with completion as (
      select * from unnest(
        ${column((c) => c.ord)}::int[], ${column((c) => c.claim.rowId)}::bigint[], ${column((c) => c.claim.token)}::text[],
        ${column((c) => c.response.status)}::int[], ${column((c) => JSON.stringify(c.response.headers))}::text[],
        ${column((c) => c.response.body.toString('hex'))}::text[]
      ) as c(ord, id, token, status, headers, body)
      limit ${claimed.length} -- see BATCH_ROWS_ESTIMATE
    ),
    completed as (
      update idempotency_keys k set
        claim_token = null, locked_until = null, completed_at = now(), request = null,
        response_status = c.status, response_headers = c.headers::jsonb, response_body = decode(c.body, 'hex'),
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

/** The rows of a batch grouped by table and columns, each with the position of the request that wrote it. */
function rowsByTable(commits: Commit[]) {
  const groups = new Map<string, { table: string; columns: string[]; ords: number[]; rows: string[] }>()
  commits.forEach((commit, index) => {
    for (const { table, row } of commit.writes) {
      const columns = Object.keys(row)
      const id = `${table}(${columns.join(',')})`
      const group = groups.get(id) ?? { table, columns, ords: [], rows: [] }
      groups.set(id, group)
      group.ords.push(index + 1)
      group.rows.push(JSON.stringify(row))
    }
  })
  return [...groups.values()]
}

/** The statement that completes the key with its response, fenced by the claim's token. */
function completion(db: Sql | Transaction, claim: Claim, response: StoredResponse) {
  return db`select complete_idempotency_key(${claim.rowId}, ${claim.token}, ${response.status}, ${db.json(response.headers)}, ${response.body})`
}

/** The error of a completion whose claim another request took over (complete_idempotency_key, migration 0003). */
export function isTakenOver(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === 'IK409'
}

/**
 * Forgets a claim whose operation never went downstream: the key is free, even for another body. Fenced: false
 * when the claim is no longer this holder's (its lease ran out and it was taken over), and then nothing that
 * depends on holding it (giving back a reservation) may be done either; call it first in that transaction.
 */
export async function releaseClaim(sql: Sql | Transaction, claim: Claim): Promise<boolean> {
  const { count } = await sql`delete from idempotency_keys where id = ${claim.rowId} and claim_token = ${claim.token}`
  return count === 1
}

/**
 * Whether this holder still holds its claim, locking the key (FOR SHARE) until the transaction ends so that no
 * takeover can come between: the fence for writes made before the call out (a reservation). Take it after the
 * transaction's other locks: a completion locks the business rows first and the key last, and so must this.
 */
export async function holdsClaim(tx: Transaction, claim: Claim): Promise<boolean> {
  const rows = await tx`select from idempotency_keys where id = ${claim.rowId} and claim_token = ${claim.token} for share`
  return rows.length === 1
}

/**
 * Ends the lease of a claim whose work rolled back after its operation id went to the processor. What
 * happened there is unknown, so the key stays bound to this request and operation id: a retry of the same
 * request takes it over at once (and the processor dedupes it); a different request under the key is a 422.
 * When the endpoint can be recovered, the recovery worker is woken for the moment the grace period ends, so
 * the outcome is settled even if the client never retries.
 */
export async function endLease(sql: Sql, claim: Claim, recoverAfterSeconds?: number): Promise<void> {
  await sql`
    with ended as (
      update idempotency_keys set claim_token = gen_random_uuid(), locked_until = now()
      where id = ${claim.rowId} and claim_token = ${claim.token}
      returning id
    )
    select graphile_worker.add_job(${RECOVER_TASK}, '{}'::json, queue_name => ${RECOVER_TASK},
             run_at => now() + ${recoverAfterSeconds ?? 0} * interval '1 second',
             job_key => ${RECOVER_TASK}, job_key_mode => 'preserve_run_at')
    from ended where ${recoverAfterSeconds !== undefined}`
}
