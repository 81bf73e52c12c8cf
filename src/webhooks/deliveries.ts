// Webhook deliveries in SQL: the sender's claim and record of an attempt, redelivery, and the API's view of them.
import type { Sql, Transaction } from '../db/connect.js'
import type { DeliveryAttempt, WebhookDelivery } from '../schemas/webhook.js'

/**
 * The graphile-worker task that sends a delivery (src/webhooks/deliver.ts); the events_fan_out trigger names it too.
 */
export const DELIVER_TASK = 'deliver_webhook'

/** What the sender needs for one attempt, claimed so that no other sender attempts it meanwhile. */
export interface ClaimedDelivery {
  id: string
  attempt: number
  eventId: string
  endpointId: string
  endpointStatus: 'enabled' | 'disabled'
  url: string
  body: string
  secrets: string[]
}

/**
 * Phase 1 of an attempt: takes a due, pending delivery, and its endpoint, for `leaseSeconds` (one attempt per
 * endpoint at a time). `busyUntil` when the endpoint is taken by another attempt; nothing when the delivery is
 * delivered, failed, not yet due, or held: a job that finds nothing to do is a duplicate wake-up, and ends.
 */
export async function claimDelivery(
  sql: Sql | Transaction,
  id: string,
  leaseSeconds: number,
): Promise<ClaimedDelivery | { busyUntil: Date } | undefined> {
  const [row] = await sql<
    {
      id: string
      attempts: number
      event_id: string
      endpoint_id: string
      endpoint_status: 'enabled' | 'disabled'
      url: string
      body: string
      secret: string
      previous_secret: string | null
    }[]
  >`
    with endpoint as (
      update webhook_endpoints e set sending_until = now() + ${leaseSeconds} * interval '1 second'
      from webhook_deliveries d
      where d.id = ${id} and d.status = 'pending' and d.next_attempt_at <= now()
        and (d.locked_until is null or d.locked_until <= now())
        and e.id = d.endpoint_id and (e.sending_until is null or e.sending_until <= now())
      returning e.id, e.status, e.url, e.secret, case when e.previous_secret_expires_at > now() then e.previous_secret
        end as previous_secret
    )
    update webhook_deliveries d set locked_until = now() + ${leaseSeconds} * interval '1 second', attempts =
      d.attempts + 1
    from endpoint, events ev
    where d.id = ${id} and ev.id = d.event_id
    returning d.id, d.attempts, d.event_id, d.endpoint_id, endpoint.status as endpoint_status, endpoint.url, ev.body,
              endpoint.secret, endpoint.previous_secret`
  if (!row) {
    const [busy] = await sql<{ sending_until: Date }[]>`
      select e.sending_until from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
      where d.id = ${id} and d.status = 'pending' and e.sending_until > now()`
    return busy ? { busyUntil: busy.sending_until } : undefined
  }
  return {
    id: row.id,
    attempt: row.attempts,
    eventId: row.event_id,
    endpointId: row.endpoint_id,
    endpointStatus: row.endpoint_status,
    url: row.url,
    body: row.body,
    secrets: [row.secret, ...(row.previous_secret ? [row.previous_secret] : [])],
  }
}

/** Wakes the sender for `deliveryId` at `runAt` (now when omitted). */
export function wake(sql: Sql | Transaction, deliveryId: string, runAt?: Date) {
  return sql`select graphile_worker.add_job(${DELIVER_TASK}, json_build_object('delivery_id', ${deliveryId}::text),
    run_at => ${runAt ?? null}::timestamptz)`
}

export type AttemptResult = Omit<DeliveryAttempt, 'attempted_at'>

/**
 * Locks the delivery's endpoint before anything of the delivery, the order in which deleting the endpoint locks
 * them (the endpoint, then its deliveries by cascade), so that the two can only wait for each other, never
 * deadlock. False when the endpoint is gone: its deliveries went with it, and there is nothing left to record.
 */
async function lockEndpoint(tx: Sql | Transaction, delivery: ClaimedDelivery): Promise<boolean> {
  const rows = await tx`select from webhook_endpoints where id = ${delivery.endpointId} for no key update`
  return rows.length === 1
}

/**
 * Phase 3: the attempt is recorded; the delivery is done, failed, or due again at `retryAt`. Not recorded when
 * the endpoint was deleted during the attempt: the delivery is gone, which is done, not failed. With
 * `handOverSeconds`, the endpoint's next due delivery is claimed for the same sender in the same transaction.
 */
export async function recordAttempt(
  tx: Transaction,
  delivery: ClaimedDelivery,
  result: AttemptResult,
  next: { status: 'delivered' } | { status: 'failed' } | { status: 'pending'; retryAt: Date },
  handOverSeconds?: number,
): Promise<{ recorded: false } | { recorded: true; handedOver: ClaimedDelivery | undefined }> {
  if (!(await lockEndpoint(tx, delivery))) return { recorded: false }
  await tx`
    insert into webhook_attempts (delivery_id, status_code, duration_ms, response_excerpt, error)
    values (${delivery.id}, ${result.status_code}, ${result.duration_ms}, ${result.response_excerpt}, ${result.error})`
  // Fenced by the claim: a redelivery asked for during the attempt cleared its lease (the delivery is pending and
  // due now, and is sent again once this attempt has let go of the endpoint), and a sender that took the delivery
  // after this one's lease ran out counted an attempt of its own. Either way what comes next is no longer this
  // attempt's to decide: only the attempt itself is recorded.
  const settled = await tx`
    update webhook_deliveries set
      status = ${next.status}, locked_until = null, last_status_code = ${result.status_code},
      delivered_at = case when ${next.status === 'delivered'} then now() end,
      next_attempt_at = ${next.status === 'pending' ? next.retryAt : new Date()}
    where id = ${delivery.id} and attempts = ${delivery.attempt} and locked_until is not null`
  if (settled.count === 1 && next.status === 'pending') await wake(tx, delivery.id, next.retryAt)
  // Taken over, the endpoint is the new sender's too (its claim took it when this lease ran out): it lets go of it.
  if (settled.count === 0 && (await takenOver(tx, delivery))) return { recorded: true, handedOver: undefined }
  return { recorded: true, handedOver: await releaseEndpoint(tx, delivery, handOverSeconds) }
}

/** Whether another sender has claimed the delivery since this attempt did (it counted an attempt of its own). */
async function takenOver(tx: Transaction, delivery: ClaimedDelivery): Promise<boolean> {
  const [row] = await tx<{ attempts: number }[]>`select attempts from webhook_deliveries where id = ${delivery.id}`
  return row !== undefined && row.attempts !== delivery.attempt
}

/**
 * The endpoint is free for its next delivery; the oldest one due (if any, the one just attempted included when a
 * redelivery made it due again) is woken now. With `handOverSeconds`,
 * that delivery is claimed here instead, for the sender that holds this transaction: the endpoint's row stays
 * locked until commit, so no other sender takes the endpoint in between, and a backlog drains without a job
 * per delivery. Should that sender die, the claim's lease runs out and the sweep wakes the delivery.
 */
async function releaseEndpoint(
  tx: Sql | Transaction,
  delivery: ClaimedDelivery,
  handOverSeconds?: number,
): Promise<ClaimedDelivery | undefined> {
  await tx`update webhook_endpoints set sending_until = null where id = ${delivery.endpointId}`
  const [next] = await tx<{ id: string }[]>`
    select id from webhook_deliveries
    where endpoint_id = ${delivery.endpointId} and status = 'pending' and next_attempt_at <= now()
      and (locked_until is null or locked_until <= now())
    order by next_attempt_at limit 1`
  if (!next) return undefined
  if (handOverSeconds !== undefined) {
    const claimed = await claimDelivery(tx, next.id, handOverSeconds)
    if (claimed && !('busyUntil' in claimed)) return claimed
  }
  await wake(tx, next.id)
  return undefined
}

/** The endpoint is disabled: the delivery is not sent, and says why. */
export async function failUnsendable(sql: Sql, delivery: ClaimedDelivery, reason: string): Promise<void> {
  await sql.begin(async (tx) => {
    if (!(await lockEndpoint(tx, delivery))) return
    await tx`insert into webhook_attempts (delivery_id, duration_ms, error) values (${delivery.id}, 0, ${reason})`
    await tx`update webhook_deliveries set status = 'failed', locked_until = null where id = ${delivery.id}`
    await releaseEndpoint(tx as unknown as Sql, delivery)
  })
}

/**
 * Sends an event again, with the same webhook-id: to one enabled endpoint, or to every enabled endpoint that takes
 * its type now (an endpoint made after the event included). A delivery that exists is made pending and due now; an
 * endpoint it never went to gets one. Returns the deliveries (none: there was nowhere to send it).
 */
export async function redeliver(
  tx: Transaction,
  accountId: string,
  eventId: string,
  endpointId?: string,
): Promise<WebhookDelivery[] | undefined> {
  const [event] = await tx<
    { type: string }[]
  >`select type from events where id = ${eventId} and account_id = ${accountId}`
  if (!event) return undefined
  const rows = await tx<{ id: string; endpoint_id: string }[]>`
    insert into webhook_deliveries (id, event_id, endpoint_id, account_id)
    select 'wd_' || substr(md5(gen_random_uuid()::text), 1, 24), ${eventId}, e.id, e.account_id
    from webhook_endpoints e
    where e.account_id = ${accountId} and e.status = 'enabled'
      and (e.id = ${endpointId ?? null} or (${endpointId ?? null}::text is null and (${event.type} = any
        (e.enabled_events) or '*' = any (e.enabled_events))))
    on conflict (event_id, endpoint_id) do update set status = 'pending', next_attempt_at = now(), locked_until = null
    returning id, endpoint_id`
  for (const row of rows) await wake(tx, row.id)
  return listDeliveries(tx, { accountId, ids: rows.map((row) => row.id) })
}

/** Deliveries with their attempts, newest first: of an endpoint, or by id. */
export async function listDeliveries(
  sql: Sql | Transaction,
  filter: { accountId: string; endpointId?: string; ids?: string[]; limit?: number },
): Promise<WebhookDelivery[]> {
  const rows = await sql<
    {
      id: string
      event_id: string
      endpoint_id: string
      status: WebhookDelivery['status']
      next_attempt_at: Date
      delivered_at: Date | null
      created_at: Date
      attempts: DeliveryAttempt[]
    }[]
  >`
    select d.id, d.event_id, d.endpoint_id, d.status, d.next_attempt_at, d.delivered_at, d.created_at,
           coalesce((select json_agg(json_build_object(
                       'attempted_at', a.attempted_at, 'status_code', a.status_code, 'duration_ms', a.duration_ms,
                       'response_excerpt', a.response_excerpt, 'error', a.error) order by a.id)
                     from webhook_attempts a where a.delivery_id = d.id), '[]') as attempts
    from webhook_deliveries d
    where d.account_id = ${filter.accountId}
      and (${filter.endpointId ?? null}::text is null or d.endpoint_id = ${filter.endpointId ?? null})
      and (${filter.ids ?? null}::text[] is null or d.id = any(${filter.ids ?? null}::text[]))
    order by d.created_at desc, d.id
    limit ${filter.limit ?? 100}`
  return rows.map((row) => ({
    id: row.id,
    object: 'webhook_delivery',
    event: row.event_id,
    endpoint: row.endpoint_id,
    status: row.status,
    attempts: row.attempts.map((attempt) => ({
      ...attempt,
      attempted_at: new Date(attempt.attempted_at).toISOString(),
    })),
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
    delivered_at: row.delivered_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  }))
}
