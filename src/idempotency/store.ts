// The SQL of idempotency keys held by requests: complete them inside the caller's transaction, fence a
// reservation with one, release one, or end its lease. Claiming is claims.ts; completing with the route's writes,
// for the requests that complete at the same moment together, completions.ts.
import type { PendingQuery, Row } from 'postgres'
import type { Sql, Transaction } from '../db/connect.js'
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
   * does, it must not forget the operation as if it had never been sent. `operationSince`: when that operation was
   * first claimed (the earliest it can have gone out).
   */
  | { outcome: 'claimed'; claim: Claim; takenOver: boolean; inherited: boolean; operationSince?: Date }
  /**
   * `expiresInMs`: how long the key had left, as PostgreSQL counted it, at the latest at `askedAt` (both clocks,
   * read before the statement was sent: a process that stalls after the answer cannot stretch the lifetime).
   */
  | {
      outcome: 'completed'
      response: StoredResponse
      expiresInMs?: number
      askedAt?: { monotonic: number; wall: number }
    }
  | { outcome: 'in-flight' }
  | { outcome: 'fingerprint-mismatch' }

export interface Timing {
  ttlSeconds: number
  leaseSeconds: number
  /** How long after a lease ends the recovery worker steps in (see src/recovery). */
  recoveryGraceSeconds: number
}

/** A key to complete: the claim that holds it, and the response it keeps. */
export interface KeyCompletion {
  claim: Claim
  response: StoredResponse
}

/**
 * The statement that completes keys with their responses (none for no keys), not yet sent: sent in the transaction
 * that made the routes' writes, or in one batch with them, so both commit or neither does; one statement for all of
 * them (the requests that complete together: src/idempotency/completions.ts). Each is fenced by its claim's token:
 * if one was taken over meanwhile (its lease ran out), complete_idempotency_keys (db/functions.sql) raises IK409,
 * which aborts the transaction (isTakenOver).
 */
export function completeKeys(sql: Sql | Transaction, completions: KeyCompletion[]): PendingQuery<Row[]>[] {
  if (completions.length === 0) return []
  // Headers go as text, cast in SQL: sent as jsonb[], each string would be encoded as JSON once more.
  return [
    sql`select complete_idempotency_keys(
      ${completions.map(({ claim }) => claim.rowId)}::bigint[], ${completions.map(({ claim }) => claim.token)}::uuid[],
      ${completions.map(({ response }) => response.status)}::smallint[],
      ${completions.map(({ response }) => JSON.stringify(response.headers))}::text[]::jsonb[],
      ${completions.map(({ response }) => response.body)}::bytea[])`,
  ]
}

/** The error of a completion whose claim another request took over (complete_idempotency_keys, db/functions.sql). */
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
  const rows =
    await tx`select from idempotency_keys where id = ${claim.rowId} and claim_token = ${claim.token} for share`
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
