// Deletes events past their retention (EVENT_RETENTION_DAYS), with their deliveries and attempts, in paced batches.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Sql } from '../db/connect.js'

export const REAP_EVENTS_TASK = 'reap_old_events'

export async function reapOldEvents(
  sql: Sql,
  options: { retentionDays: number; batchSize: number; signal?: AbortSignal },
): Promise<number> {
  let deleted = 0
  while (!options.signal?.aborted) {
    const { count } = await sql`
      delete from events where id in (
        select id from events where created_at < now() - ${options.retentionDays} * interval '1 day'
        order by created_at limit ${options.batchSize})`
    deleted += count
    if (count < options.batchSize) break
    await sleep(50)
  }
  return deleted
}
