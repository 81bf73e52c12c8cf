// The idempotency keys the recovery worker takes over: when an abandoned claim is due, taking a batch over with a
// token of the worker's own, and giving one back when it could not be settled. Their writes live here, beside the
// claims and completions of requests (claims.ts, store.ts), so that every way a key changes is in src/idempotency/;
// the recovery task (src/recovery/recover-abandoned-claims.ts) decides what to do with them.
import type { Fragment } from 'postgres'
import type { Sql } from '../db/connect.js'
import type { AbandonedClaim } from './recovery.js'

export interface TakeOverSettings {
  /** How long after its lease ended a claim is left to its client's own retry before the worker steps in. */
  graceSeconds: number
  /** How long the worker's own claim lasts: it must settle the claim within it. */
  leaseSeconds: number
  batchSize: number
}

/**
 * When an abandoned claim is due for the recovery worker: the end of its lease, then the grace period, doubled
 * after each failed attempt (up to 64 times). The one definition: the worker's claim, its wake-up and the backlog
 * (backlog.ts) read it.
 */
export function dueAt(sql: Sql, graceSeconds: number): Fragment {
  return sql`locked_until + ${graceSeconds} * least(power(2, recovery_attempts), 64) * interval '1 second'`
}

/**
 * Takes over a batch of claims whose lease ended at least a grace period ago (doubled after each failed
 * attempt). SKIP LOCKED and the new token make concurrent workers split the work, never share it.
 */
export async function takeOverAbandoned(
  sql: Sql,
  endpoints: string[],
  settings: TakeOverSettings,
): Promise<AbandonedClaim[]> {
  if (endpoints.length === 0) return []
  const rows = await sql<
    {
      id: string
      claim_token: string
      operation_id: string
      account_id: string
      endpoint: string
      key: string
      request: AbandonedClaim['request'] | null
      created_at: Date
    }[]
  >`
    update idempotency_keys as k set
      claim_token = gen_random_uuid(),
      locked_until = now() + ${settings.leaseSeconds} * interval '1 second'
    where k.id in (
      select id from idempotency_keys
      where completed_at is null
        and locked_until <= now() and ${dueAt(sql, settings.graceSeconds)} <= now()
        and endpoint = any(${endpoints})
      order by locked_until
      limit ${settings.batchSize}
      for update skip locked)
    returning k.id, k.claim_token, k.operation_id, k.account_id, k.endpoint, k.key, k.request, k.created_at`
  return rows.map((row) => ({
    rowId: row.id,
    token: row.claim_token,
    operationId: row.operation_id,
    accountId: row.account_id,
    endpoint: row.endpoint,
    key: row.key,
    request: row.request ?? { params: {}, body: null },
    createdAt: row.created_at,
  }))
}

/** Ends the worker's claim as if its lease ran out, and counts the failure: the same request may take it over. */
export async function giveBack(sql: Sql, claim: AbandonedClaim): Promise<void> {
  await sql`
    update idempotency_keys set claim_token = gen_random_uuid(), locked_until = now(), recovery_attempts =
      recovery_attempts + 1
    where id = ${claim.rowId} and claim_token = ${claim.token}`
}
