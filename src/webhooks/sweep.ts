// Wakes the sender for deliveries that are due but have no job to carry them: a job lost with a worker that died
// mid-attempt (its lease has run out), or any other gap. The delivery row is the truth; a duplicate wake-up
// finds the delivery claimed or done, and ends.
//
// Bounded, and read through indexes that hold only what it looks for (db/migrations/0013): its cost follows the
// deliveries it wakes, not the size of webhook_deliveries (docs/measure.md has it on a million). Each wake-up's job
// key is the delivery's, so runs that find the same delivery again, before a sender took it, add no second job.
import type { Sql, Transaction } from '../db/connect.js'
import { DELIVER_TASK } from './deliveries.js'

export const SWEEP_TASK = 'sweep_webhook_deliveries'
/** How many deliveries one run wakes at the most; the next run (a minute later) takes the rest. */
export const SWEEP_BATCH = 500

/** Enqueues a job for overdue pending deliveries, oldest first; returns how many. */
export async function sweepDeliveries(
  sql: Sql,
  options: { overdueSeconds: number; batchSize?: number },
): Promise<number> {
  const rows = await sql`
    with overdue as (${overdueDeliveries(sql, options.overdueSeconds, options.batchSize ?? SWEEP_BATCH)})
    select graphile_worker.add_job(${DELIVER_TASK}, json_build_object('delivery_id', id), job_key => 'deliver:' || id,
      job_key_mode => 'preserve_run_at')
    from overdue`
  return rows.length
}

/** The sweep's read: ids of the deliveries no live sender will send, longest overdue first (its plan is tested). */
export function overdueDeliveries(sql: Sql | Transaction, overdueSeconds: number, limit: number) {
  return sql`
    -- Held by a sender that is gone: its lease ran out (webhook_deliveries_leased).
    (select id, locked_until as since from webhook_deliveries
     where status = 'pending' and locked_until is not null and locked_until <= now()
     order by locked_until limit ${limit})
    union all
    -- Due for a while with nobody sending it (webhook_deliveries_unclaimed).
    (select id, next_attempt_at as since from webhook_deliveries
     where status = 'pending' and locked_until is null and next_attempt_at <= now() - ${overdueSeconds} * interval
       '1 second'
     order by next_attempt_at limit ${limit})
    order by since limit ${limit}`
}
