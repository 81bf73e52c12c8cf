// The idempotency keys the recovery worker takes over: when an abandoned claim is due, taking a batch over with a
// token of the worker's own, and giving one back when it could not be settled; when the next one is due, and how
// far behind the worker is. They live here, beside the claims and completions of requests (claims.ts, store.ts),
// so that every statement on a key is in src/idempotency/; the recovery task
// (src/recovery/recover-abandoned-claims.ts) decides what to do with them. Each reads only the claims of the
// Recoveries it is given, by the name their claims recorded (recovery.ts).
import type { Fragment } from 'postgres'
import type { Sql } from '../db/connect.js'
import { theRow } from '../db/rows.js'
import { type AbandonedClaim, RECOVER_TASK } from './recovery.js'

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
 * read it.
 */
function dueAt(sql: Sql, graceSeconds: number): Fragment {
  return sql`locked_until + ${graceSeconds} * least(power(2, recovery_attempts), 64) * interval '1 second'`
}

/**
 * Takes over a batch of claims whose lease ended at least a grace period ago (doubled after each failed
 * attempt). SKIP LOCKED and the new token make concurrent workers split the work, never share it.
 */
export async function takeOverAbandoned(
  sql: Sql,
  recoveries: string[],
  settings: TakeOverSettings,
): Promise<AbandonedClaim[]> {
  if (recoveries.length === 0) return []
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
        and request->>'recovery' = any(${recoveries})
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
    // Taken by its Recovery's name, so it has its request.
    request: { processorAccount: null, ...(row.request as Omit<AbandonedClaim['request'], 'processorAccount'>) },
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

/**
 * Schedules the next recovery run for the moment the next unsettled claim becomes due (its lease plus grace, with
 * its backoff), rather than leaving it to the next scheduled run, up to a minute later: a holder that crashed
 * wakes nobody, and a claim not yet past its grace at this run would otherwise wait for the schedule. One job key,
 * replaced by every run, so there is at most one such wake-up.
 */
export async function wakeWhenNextDue(sql: Sql, recoveries: string[], graceSeconds: number): Promise<void> {
  if (recoveries.length === 0) return
  await sql`
    select graphile_worker.add_job(${RECOVER_TASK}, '{}'::json, queue_name => ${RECOVER_TASK}, run_at => due, job_key
      => ${`${RECOVER_TASK}:next`})
    from (
      select min(${dueAt(sql, graceSeconds)}) as due
      from idempotency_keys where completed_at is null and request->>'recovery' = any(${recoveries})
    ) next
    where due is not null`
}

export interface SettlementBacklog {
  overdue: number
  /** How long past its due time the oldest overdue claim is; 0 when none is. */
  oldestSeconds: number
}

/**
 * How far behind settlement is: abandoned claims that are due (their lease ended, then their grace period, longer
 * after each failed attempt, as the recovery worker waits) and that no recovery run has taken yet. A run takes a
 * claim by moving its lease, so a claim stays overdue only while no run reaches it: the recovery queue stalled,
 * every worker down, or more claims than a run settles in its time. Every claim kept for a Recovery counts, whatever
 * Recovery it names: one that names a Recovery no worker has (or none: opened by a version before claims named
 * theirs, docs/operations.md) is overdue for good, and must show.
 */
export async function settlementBacklog(sql: Sql, graceSeconds: number): Promise<SettlementBacklog> {
  const rows = await sql<{ overdue: number; oldest_seconds: number | null }[]>`
    select count(*)::int as overdue, extract(epoch from now() - min(due))::float8 as oldest_seconds
    from (
      select ${dueAt(sql, graceSeconds)} as due
      from idempotency_keys
      where completed_at is null and locked_until < now() and request is not null
    ) as claims
    where due < now()`
  const row = theRow(rows, 'a count')
  return { overdue: row.overdue, oldestSeconds: row.oldest_seconds ?? 0 }
}
