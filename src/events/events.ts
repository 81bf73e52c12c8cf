// Events: what happened to a resource, written in the very transaction that made it happen, so that no change
// goes untold and no event tells of a change that rolled back. Writing one also writes its webhook deliveries
// (the events_fan_out trigger, migration 0005).
import { newId } from '../db/ids.js'
import type { RowInsert } from '../db/row-insert.js'
import type { Event, EventData, EventType } from '../schemas/webhook.js'

/**
 * The insert of a new event (src/db/row-insert.ts). Its body is built here, once: the API and every webhook
 * delivery send these very bytes.
 */
export function eventInsert<T extends EventType>(
  accountId: string,
  type: T,
  data: EventData<T>,
  createdAt = new Date(),
): RowInsert {
  const event = { id: newId('evt'), object: 'event', type, created_at: createdAt.toISOString(), data } as Event
  return {
    table: 'events',
    row: { id: event.id, account_id: accountId, type, body: JSON.stringify(event), created_at: createdAt },
  }
}
