// The recovery worker's task: settles claims whose holders are gone, so that an unknown outcome (the processor
// was called, the response was never recorded) becomes a known one within minutes, without a client retry and
// without ever moving money itself. Each claim goes through the same phases as a request:
//   1. claim: take the abandoned claim over with a token of our own (the fence: a late holder or a racing
//      client can no longer complete it, and a second worker skips it)
//   2. call out: ask downstream what happened under the operation id (outside any transaction)
//   3. record and complete: write what happened and the response the request would have returned, and complete
//      the key, in one transaction fenced by our token; or, if downstream never saw it, release the key and give
//      back what the request reserved, in one transaction fenced by our token too
// "Downstream never saw it" is final only because no call under the operation id can still reach the processor:
// every call is given up after PROCESSOR_TIMEOUT_MS, and the worker waits RECOVERY_GRACE_SECONDS (longer, as
// src/config.ts enforces) after the last holder's lease ended, and that lease outlasts the holder's deadline.
import type { Logger } from 'pino'
import type { Sql } from '../db/connect.js'
import { dueAt, giveBack, type TakeOverSettings, takeOverAbandoned } from '../idempotency/abandoned-claims.js'
import { toStoredResponse } from '../idempotency/response.js'
import { completeKeys, isTakenOver, releaseClaim } from '../idempotency/store.js'
import { RECOVER_TASK, type Recovery } from '../idempotency/recovery.js'

export type RecoverySettings = TakeOverSettings

export interface RecoveryRun {
  /** Outcomes downstream reported, now recorded with their responses. */
  settled: number
  /** Claims downstream never saw, now released. */
  released: number
  /** Claims that could not be settled this time; each is tried again later, after a longer wait. */
  failed: number
}

/** Settles up to one batch of abandoned claims on the endpoints that have a Recovery. */
export async function recoverAbandonedClaims(
  sql: Sql,
  recoveries: Recovery[],
  settings: RecoverySettings,
  log: Logger,
): Promise<RecoveryRun> {
  const byEndpoint = new Map(recoveries.map((recovery) => [recovery.endpoint, recovery]))
  const run: RecoveryRun = { settled: 0, released: 0, failed: 0 }
  for (const claim of await takeOverAbandoned(sql, [...byEndpoint.keys()], settings)) {
    const recovery = byEndpoint.get(claim.endpoint)
    // Taken over by the endpoints given, so never: another endpoint's would be a defect of takeOverAbandoned.
    if (!recovery) throw new Error(`claimed ${claim.endpoint}, which has no Recovery`)
    const context = {
      idempotency_key: claim.key,
      operation_id: claim.operationId,
      endpoint: claim.endpoint,
      account_id: claim.accountId,
    }
    try {
      const found = await recovery.lookup(claim)
      if (found === undefined) {
        // Fenced: the reservation is given back only with the key, and only while the worker still holds it. If
        // its lease ran out during a slow lookup, a client's retry may have taken the key over and be using the
        // reservation right now; its new holder settles it.
        const released = await sql.begin(async (tx) => {
          if (!(await releaseClaim(tx, claim))) return false
          await recovery.release?.(tx, claim)
          return true
        })
        if (!released) continue
        run.released++
        log.info(context, 'recovery: downstream never saw the operation; key released')
      } else {
        // Fenced: if a client's retry took the key over meanwhile, the completion fails and all of it rolls back.
        const recorded = await sql.begin(async (tx) => {
          const response = toStoredResponse(await recovery.record(tx, claim, found))
          await Promise.all(completeKeys(tx, [{ claim, response }]))
          return response.status
        })
        run.settled++
        log.info({ ...context, status: recorded }, 'recovery: outcome recorded and key completed')
      }
    } catch (error) {
      if (isTakenOver(error)) continue
      run.failed++
      log.error(
        { ...context, err: error },
        'recovery: could not settle an abandoned claim; it will be tried again later',
      )
      await giveBack(sql, claim).catch(() => {})
    }
  }
  await wakeWhenNextDue(sql, [...byEndpoint.keys()], settings)
  return run
}

/**
 * Schedules the next run for the moment the next unsettled claim becomes due (its lease plus grace, with its
 * backoff), rather than leaving it to the next scheduled run, up to a minute later: a holder that crashed wakes
 * nobody, and a claim not yet past its grace at this run would otherwise wait for the schedule. One job key,
 * replaced by every run, so there is at most one such wake-up.
 */
async function wakeWhenNextDue(sql: Sql, endpoints: string[], settings: RecoverySettings): Promise<void> {
  if (endpoints.length === 0) return
  await sql`
    select graphile_worker.add_job(${RECOVER_TASK}, '{}'::json, queue_name => ${RECOVER_TASK}, run_at => due, job_key
      => ${`${RECOVER_TASK}:next`})
    from (
      select min(${dueAt(sql, settings.graceSeconds)}) as due
      from idempotency_keys where completed_at is null and endpoint = any(${endpoints})
    ) next
    where due is not null`
}
