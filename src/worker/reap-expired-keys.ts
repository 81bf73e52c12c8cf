// Deletes idempotency records past their expiry. Reads already ignore them; this only reclaims space.
import type { Sql } from '../db/connect.js'

export const REAP_TASK = 'reap_expired_idempotency_keys'

/**
 * Deletes in batches of `batchSize` rows, one short statement each, so locks and WAL stay small;
 * stops after `maxBatches` and leaves the rest to the next scheduled run. Returns how many rows went.
 */
export async function reapExpiredKeys(sql: Sql, options: { batchSize: number; maxBatches?: number }): Promise<number> {
  const maxBatches = options.maxBatches ?? 100
  let deleted = 0
  for (let batch = 0; batch < maxBatches; batch++) {
    const { count } = await sql`
      delete from idempotency_keys
      where id in (
        select id from idempotency_keys
        where expires_at <= now()
        order by expires_at
        limit ${options.batchSize}
        for update skip locked
      )`
    deleted += count
    if (count < options.batchSize) break
  }
  return deleted
}
