// The SQL of idempotency keys: claim a key, complete it inside the caller's transaction, or release it.
import { randomUUID } from 'node:crypto'
import type { Sql, Transaction } from '../db/connect.js'

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

export interface StoredResponse {
  status: number
  headers: Record<string, string>
  body: Buffer
}

export type ClaimResult =
  | { outcome: 'claimed'; claim: Claim }
  | { outcome: 'completed'; response: StoredResponse }
  | { outcome: 'in-flight' }
  | { outcome: 'fingerprint-mismatch' }

export interface Timing {
  ttlSeconds: number
  leaseSeconds: number
}

// A claim races only with a release or an expiry between our two statements; a few rounds always settle it.
const CLAIM_ROUNDS = 3

export async function claimKey(sql: Sql, scope: KeyScope, fingerprint: Buffer, timing: Timing): Promise<ClaimResult> {
  for (let round = 0; round < CLAIM_ROUNDS; round++) {
    const token = randomUUID()
    // Inserts a new claim, or takes the row over when it has expired (a new request: new operation, new
    // expiry, old response dropped) or when its holder's lease ran out with the same request (a crash).
    const [claimed] = await sql<{ id: string; operation_id: string }[]>`
      insert into idempotency_keys as k
        (account_id, endpoint, key, fingerprint, operation_id, claim_token, locked_until, expires_at)
      values (
        ${scope.accountId}, ${scope.endpoint}, ${scope.key}, ${fingerprint}, gen_random_uuid(), ${token},
        now() + ${timing.leaseSeconds} * interval '1 second', now() + ${timing.ttlSeconds} * interval '1 second'
      )
      on conflict (account_id, endpoint, key) do update set
        fingerprint = excluded.fingerprint,
        claim_token = excluded.claim_token,
        locked_until = excluded.locked_until,
        operation_id = case when k.expires_at <= now() then excluded.operation_id else k.operation_id end,
        created_at = case when k.expires_at <= now() then now() else k.created_at end,
        expires_at = case when k.expires_at <= now() then excluded.expires_at else k.expires_at end,
        completed_at = null, response_status = null, response_headers = null, response_body = null
      where k.expires_at <= now()
         or (k.completed_at is null and k.locked_until <= now() and k.fingerprint = excluded.fingerprint)
      returning k.id, k.operation_id`
    if (claimed) return { outcome: 'claimed', claim: { rowId: claimed.id, token, operationId: claimed.operation_id } }

    const [existing] = await sql<
      { fingerprint: Buffer; completed_at: Date | null; response_status: number; response_headers: Record<string, string>; response_body: Buffer }[]
    >`
      select fingerprint, completed_at, response_status, response_headers, response_body
      from idempotency_keys
      where account_id = ${scope.accountId} and endpoint = ${scope.endpoint} and key = ${scope.key}
        and expires_at > now()`
    if (!existing) continue
    if (!existing.fingerprint.equals(fingerprint)) return { outcome: 'fingerprint-mismatch' }
    if (!existing.completed_at) return { outcome: 'in-flight' }
    return {
      outcome: 'completed',
      response: { status: existing.response_status, headers: existing.response_headers, body: existing.response_body },
    }
  }
  return { outcome: 'in-flight' }
}

/**
 * Records the response in the transaction that made the handler's writes, so both commit or neither does.
 * Returns false when the claim was taken over (our lease ran out): the caller must roll back.
 */
export async function completeClaim(tx: Transaction, claim: Claim, response: StoredResponse): Promise<boolean> {
  const rows = await tx`
    update idempotency_keys set
      claim_token = null, locked_until = null, completed_at = now(),
      response_status = ${response.status}, response_headers = ${tx.json(response.headers)}, response_body = ${response.body}
    where id = ${claim.rowId} and claim_token = ${claim.token}`
  return rows.count === 1
}

/** Forgets a claim whose work rolled back before anything left this service: the key is free, even for another body. */
export async function releaseClaim(sql: Sql, claim: Claim): Promise<void> {
  await sql`delete from idempotency_keys where id = ${claim.rowId} and claim_token = ${claim.token}`
}

/**
 * Ends the lease of a claim whose work rolled back after its operation id went to the processor. What
 * happened there is unknown, so the key stays bound to this request and operation id: a retry of the same
 * request takes it over at once (and the processor dedupes it); a different request under the key is a 422.
 */
export async function endLease(sql: Sql, claim: Claim): Promise<void> {
  await sql`
    update idempotency_keys set claim_token = gen_random_uuid(), locked_until = now()
    where id = ${claim.rowId} and claim_token = ${claim.token}`
}
