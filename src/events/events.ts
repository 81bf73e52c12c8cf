// Events: what happened to a resource, written in the very transaction that made it happen, so that no change
// goes untold and no event tells of a change that rolled back. Writing one also writes its webhook deliveries
// (the events_fan_out trigger: db/functions.sql).
import type { Transaction } from '../db/connect.js'
import { gatheredInsert } from '../db/gathered-inserts.js'
import { newId } from '../db/ids.js'
import type { Event, EventData, EventType } from '../schemas/webhook.js'

interface EventRow {
  id: string
  account_id: string
  type: EventType
  body: string
  created_at: Date
}

/** Events in one statement, however many (src/db/gathered-inserts.ts). */
const insertEventRow = gatheredInsert<EventRow>(
  (sql, rows) => sql`
    insert into events (id, account_id, type, body, created_at)
    select * from unnest(${rows.map((row) => row.id)}::text[], ${rows.map((row) => row.account_id)}::text[],
      ${rows.map((row) => row.type)}::text[], ${rows.map((row) => row.body)}::text[],
      ${rows.map((row) => row.created_at)}::timestamptz[])`,
)

/**
 * Inserts a new event in `tx`. Its body is built here, once: the API and every webhook delivery send these very
 * bytes. The insert answers nothing the caller needs: in a completion's transaction it goes out with the others.
 */
export function insertEvent<T extends EventType>(
  tx: Transaction,
  accountId: string,
  type: T,
  data: EventData<T>,
  createdAt = new Date(),
): Promise<void> {
  const event = { id: newId('evt'), object: 'event', type, created_at: createdAt.toISOString(), data } as Event
  return insertEventRow(tx, {
    id: event.id,
    account_id: accountId,
    type,
    body: JSON.stringify(event),
    created_at: createdAt,
  })
}
