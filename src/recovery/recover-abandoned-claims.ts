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
import { giveBack, type TakeOverSettings, takeOverAbandoned, wakeWhenNextDue } from '../idempotency/abandoned-claims.js'
import { toStoredResponse } from '../idempotency/response.js'
import { completeKeys, isTakenOver, releaseClaim } from '../idempotency/store.js'
import type { Recovery } from '../idempotency/recovery.js'

export type RecoverySettings = TakeOverSettings

export interface RecoveryRun {
  /** Outcomes downstream reported, now recorded with their responses. */
  settled: number
  /** Claims downstream never saw, now released. */
  released: number
  /** Claims that could not be settled this time; each is tried again later, after a longer wait. */
  failed: number
}

/** Settles up to one batch of abandoned claims of these Recoveries, each by the Recovery its claim names. */
export async function recoverAbandonedClaims(
  sql: Sql,
  recoveries: Recovery[],
  settings: RecoverySettings,
  log: Logger,
): Promise<RecoveryRun> {
  const byName = new Map(recoveries.map((recovery) => [recovery.name, recovery]))
  const run: RecoveryRun = { settled: 0, released: 0, failed: 0 }
  for (const claim of await takeOverAbandoned(sql, [...byName.keys()], settings)) {
    const recovery = byName.get(claim.request.recovery)
    // Taken over by the names given, so never: another name's would be a defect of takeOverAbandoned.
    if (!recovery) throw new Error(`claimed ${claim.endpoint} of Recovery ${claim.request.recovery}, not given`)
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
  await wakeWhenNextDue(sql, [...byName.keys()], settings.graceSeconds)
  return run
}
