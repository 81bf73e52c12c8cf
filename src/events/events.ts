// Events: what happened to a resource, written in the very transaction that made it happen, so that no change
// goes untold and no event tells of a change that rolled back. Writing one also writes its webhook deliveries
// (the events_fan_out trigger, migration 0005).
import type { Sql, Transaction } from '../db/connect.js'
import { newId } from '../db/ids.js'
import type { Event, EventType } from '../schemas/webhook.js'

/**
 * The INSERT of a new event, not yet run (`db` is where it will run). Its body is built here, once: the API and
 * every webhook delivery send these very bytes.
 */
export function eventWrite(db: Sql | Transaction, accountId: string, type: EventType, data: Event['data'], createdAt = new Date()) {
  const event: Event = { id: newId('evt'), object: 'event', type, created_at: createdAt.toISOString(), data }
  return db`
    insert into events (id, account_id, type, body, created_at)
    values (${event.id}, ${accountId}, ${type}, ${JSON.stringify(event)}, ${createdAt})`
}
