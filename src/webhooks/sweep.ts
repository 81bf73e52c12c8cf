// Wakes the sender for deliveries that are due but have no job to carry them: a job lost with a worker that died
// mid-attempt (its lease has run out), or any other gap. The delivery row is the truth; a duplicate wake-up
// finds the delivery claimed or done, and ends.
import type { Sql } from '../db/connect.js'
import { DELIVER_TASK } from './deliveries.js'

export const SWEEP_TASK = 'sweep_webhook_deliveries'

/** Enqueues a job for every overdue pending delivery; returns how many. */
export async function sweepDeliveries(sql: Sql, options: { overdueSeconds: number }): Promise<number> {
  const rows = await sql`
    select graphile_worker.add_job(${DELIVER_TASK}, json_build_object('delivery_id', id))
    from webhook_deliveries
    where status = 'pending' and next_attempt_at <= now()
      -- Held by a sender that is gone (its lease ran out), or due for a while with nobody sending it.
      and (locked_until <= now() or (locked_until is null and next_attempt_at <= now() - ${options.overdueSeconds} * interval '1 second'))
    limit 1000`
  return rows.length
}
