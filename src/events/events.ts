// Events: what happened to a resource, written in the very transaction that made it happen, so that no change
// goes untold and no event tells of a change that rolled back. Writing one also writes its webhook deliveries
// (the events_fan_out trigger: db/functions.sql).
import type { Transaction } from '../db/connect.js'
import { newId } from '../db/ids.js'
import type { Event, EventData, EventType } from '../schemas/webhook.js'

/**
 * Inserts a new event in `tx`. Its body is built here, once: the API and every webhook delivery send these very
 * bytes. The insert answers nothing the caller needs, so a caller may send it with others (Promise.all) rather
 * than wait for it alone.
 */
export async function insertEvent<T extends EventType>(
  tx: Transaction,
  accountId: string,
  type: T,
  data: EventData<T>,
  createdAt = new Date(),
): Promise<void> {
  const event = { id: newId('evt'), object: 'event', type, created_at: createdAt.toISOString(), data } as Event
  await tx`
    insert into events (id, account_id, type, body, created_at)
    values (${event.id}, ${accountId}, ${type}, ${JSON.stringify(event)}, ${createdAt})`
}
