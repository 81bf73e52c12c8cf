// A webhook receiver done right, to copy: it verifies each delivery with the client's verifyWebhook (the public
// `standardwebhooks` package: signature and timestamp tolerance), and applies each webhook-id at most once: the id is
// recorded in the same
// transaction as the delivery's effect, so a redelivery (a retry, a redeliver) is acknowledged and not applied.
import { type Event, verifyWebhook, WebhookVerificationError } from 'payments-api/client'
import type { Sql } from '../../src/db/connect.js'

export interface Received {
  status: number
  body: string
}

export async function prepareReceiverTables(sql: Sql): Promise<void> {
  await sql`create table if not exists receiver_processed_webhooks (
    webhook_id text primary key, type text not null, received_at timestamptz not null default now())`
  // The effect: what this receiver knows of each charge, and how many times an event was applied to it.
  await sql`create table if not exists receiver_charges (
    charge_id text primary key, status text not null, amount_refunded_cents integer not null, applied_events integer
      not null)`
}

export function createReceiver(options: { sql: Sql; secret: string }) {
  return async function receive(
    body: string,
    headers: Record<string, string | string[] | undefined>,
  ): Promise<Received> {
    let event: Event
    try {
      event = verifyWebhook(body, headers, options.secret)
    } catch (error) {
      if (error instanceof WebhookVerificationError) return { status: 400, body: `not verified: ${error.message}` }
      throw error
    }
    const webhookId = String(headers['webhook-id'])
    const applied = await options.sql.begin(async (tx) => {
      const [first] = await tx`
        insert into receiver_processed_webhooks (webhook_id, type) values (${webhookId}, ${event.type})
        on conflict (webhook_id) do nothing returning webhook_id`
      if (!first) return false
      // data.object is whichever resource changed: this receiver keeps charges, and acknowledges the rest (a
      // resource added later, a payout, say, arrives here too, and must not break it).
      const charge = event.data.object
      if (charge.object !== 'charge') return true
      await tx`
        insert into receiver_charges (charge_id, status, amount_refunded_cents, applied_events)
        values (${charge.id}, ${charge.status}, ${charge.amount_refunded_cents}, 1)
        on conflict (charge_id) do update set status = excluded.status, amount_refunded_cents =
          excluded.amount_refunded_cents,
                                              applied_events = receiver_charges.applied_events + 1`
      return true
    })
    return { status: 200, body: applied ? 'applied' : 'already applied' }
  }
}
