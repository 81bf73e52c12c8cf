// Deletes completed idempotency records past their expiry (a task of the worker, src/worker/worker.ts). Reads already
// ignore them; this only reclaims space, at a pace that keeps up with the peak write rate without crowding out the
// requests that share the database.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Sql } from '../db/connect.js'

export const REAP_TASK = 'reap_expired_idempotency_keys'

export interface ReapOptions {
  /** Rows per DELETE: small enough to keep each lock and WAL burst short. */
  batchSize: number
  /** Stop after this many batches (the rest is left to the next run). */
  maxBatches?: number
  /** Stop after this long; the next scheduled run goes on. */
  maxSeconds?: number
  /**
   * The share of wall time spent deleting: after each batch it rests so that deleting takes at most this share
   * (0.5: as long as the batch took). Measured by `npm run bench -- --reaper`.
   */
  dutyCycle?: number
  /** Stops between batches when aborted (the worker is shutting down). */
  signal?: AbortSignal
}

/** Deletes expired keys in paced batches, oldest first; returns how many rows went. */
export async function reapExpiredKeys(sql: Sql, options: ReapOptions): Promise<number> {
  const maxBatches = options.maxBatches ?? Number.POSITIVE_INFINITY
  const deadline = performance.now() + (options.maxSeconds ?? 50) * 1000
  const restFactor = 1 / (options.dutyCycle ?? 0.5) - 1
  let deleted = 0
  for (let batch = 0; batch < maxBatches && performance.now() < deadline && !options.signal?.aborted; batch++) {
    const started = performance.now()
    const { count } = await sql`
      delete from idempotency_keys
      where id in (
        select id from idempotency_keys
        -- Completed keys only: an unsettled key never expires (its operation may be downstream), whether a holder
        -- works on it, the recovery worker has yet to settle it, or (on an endpoint with no Recovery) it waits for
        -- its own client's retry.
        where expires_at <= now() and completed_at is not null
        order by expires_at
        limit ${options.batchSize}
        for update skip locked
      )`
    deleted += count
    if (count < options.batchSize) break
    await sleep((performance.now() - started) * restFactor, undefined, { signal: options.signal }).catch(() => {})
  }
  return deleted
}
