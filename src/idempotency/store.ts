// The SQL of idempotency keys: claim a key, complete it inside the caller's transaction, or release it.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { PendingQuery, Row } from 'postgres'
import type { Sql, Transaction } from '../db/connect.js'
import { send } from '../db/pipeline.js'
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

/**
 * Claims the key for this request, or says why not. One statement finds out: it inserts a new claim, or, when
 * the key exists, reads it without writing (no lock, no transaction id), so replays, 409s and 422s cost a read.
 * Only an expired completed key or a claim abandoned by its holder is taken over, by a second, conditional
 * UPDATE; a claim whose lease is still running is never taken. An unsettled key never expires: its operation may
 * be downstream, so it stays bound to its request until a retry or the recovery worker settles it.
 */
export async function claimKey(
  sql: Sql,
  scope: KeyScope,
  fingerprint: Buffer,
  timing: Timing,
  /** Kept with the claim when the endpoint can be recovered: the validated request, to settle it without its client. */
  request: unknown = null,
): Promise<ClaimResult> {
  const waits = [...IN_FLIGHT_WAITS_MS]
  for (let round = 0; round < CLAIM_ROUNDS; round++) {
    const token = randomUUID()
    const askedAt = { monotonic: performance.now(), wall: Date.now() }
    // Read first: when the key exists (a replay, a 409, a 422) the INSERT has no row to try, so the statement is a
    // plain index read. Against inserting with ON CONFLICT DO NOTHING first, measured with npm run bench: a
    // replay's database time per request 0.28 -> 0.16 ms, new claims unchanged.
    const [row] = await sql<KeyRow[]>`
      with existing as (
        select id, operation_id, fingerprint, claim_token, expires_at <= now() as expired,
               extract(epoch from expires_at - now())::float8 * 1000 as expires_in_ms,
               coalesce(locked_until <= now(), false) as lease_over, completed_at, response_status, response_headers, response_body
        from idempotency_keys
        where account_id = ${scope.accountId} and endpoint = ${scope.endpoint} and key = ${scope.key}
      ),
      inserted as (
        insert into idempotency_keys
          (account_id, endpoint, key, fingerprint, operation_id, claim_token, locked_until, expires_at, request)
        select ${scope.accountId}, ${scope.endpoint}, ${scope.key}, ${fingerprint}, gen_random_uuid(), ${token},
               now() + ${timing.leaseSeconds} * interval '1 second', now() + ${timing.ttlSeconds} * interval '1 second',
               ${request === null ? null : sql.json(request as never)}
        where not exists (select from existing)
        on conflict (account_id, endpoint, key) do nothing
        returning id, operation_id
      )
      select true as inserted, id, operation_id, null::bytea as fingerprint, null::uuid as claim_token,
             false as expired, null::float8 as expires_in_ms, false as lease_over, null::timestamptz as completed_at,
             null::smallint as response_status, null::jsonb as response_headers, null::bytea as response_body
      from inserted
      union all
      select false, id, operation_id, fingerprint, claim_token, expired, expires_in_ms, lease_over, completed_at,
             response_status, response_headers, response_body
      from existing`
    // The key was inserted by a transaction that committed after this statement's snapshot: look again.
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
    const operationId = await takeOver(sql, row, fingerprint, token, timing, request)
    if (operationId) return { outcome: 'claimed', claim: { rowId: row.id, token, operationId }, takenOver: true, inherited: unsettled }
  }
  return { outcome: 'in-flight' }
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

/**
 * Runs `writes` and the key's completion as one statement, each write a WITH clause: they commit together or not
 * at all, in one round trip, on any pooled connection (no transaction to hold one). Without a claim (a request
 * sent without a key), the writes alone.
 */
export async function commitWithCompletion(sql: Sql, writes: PendingQuery<Row[]>[], claim: Claim | null, response: StoredResponse): Promise<void> {
  const clauses = writes.map((write, index) => sql`${sql.unsafe(`write_${index}`)} as (${write})`)
  const completed = sql`completion as (${claim ? completion(sql, claim, response) : sql`select`})`
  const withClauses = [...clauses, completed].reduce((joined, clause) => sql`${joined}, ${clause}`)
  await sql`with ${withClauses} select from completion`
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
