// Nothing the processor told is missed: webhooks can be lost, or the endpoint down for hours, so a scheduled job
// reads the processor's list of events since the last one it read (a few minutes back, for events that became
// visible late), and accepts each through the same inbox as a webhook (a duplicate changes nothing); then it
// applies again what still waits for its object.
import type { Logger } from 'pino'
import type { Sql } from '../db/connect.js'
import { processorEventsWaiting } from '../observability/metrics.js'
import type { LaterOutcomes } from '../processor/later-outcomes.js'
import type { LaterSettings } from './apply.js'
import { acceptEvent, retryWaitingEvents, withCapturedFunds } from './inbox.js'
import { theRow } from '../db/rows.js'
import { linkedProcessorAccounts } from '../accounts/api-keys.js'

/**
 * How far back each run reads again: an event listed late (its id already written, its list entry not) is not missed.
 */
const OVERLAP_MS = 5 * 60_000
/** Stripe keeps events 30 days: a cursor older than that has lost some. */
const EVENTS_KEPT_MS = 30 * 86_400_000

export interface PullResult {
  read: number
  fresh: number
  appliedFromWaiting: number
}

export async function pullEvents(
  sql: Sql,
  later: LaterOutcomes,
  settings: LaterSettings,
  log: Logger,
): Promise<PullResult> {
  const result: PullResult = { read: 0, fresh: 0, appliedFromWaiting: 0 }
  // The platform's own events, then each linked connected account's (Stripe Connect): each is its own list, and one
  // that cannot be read (its access revoked, the processor down) does not keep the others from being read.
  const unread: string[] = []
  for (const processorAccount of [null, ...(await linkedProcessorAccounts(sql))]) {
    try {
      const pulled = await pullEventsOf(sql, later, settings, log, processorAccount)
      result.read += pulled.read
      result.fresh += pulled.fresh
    } catch (error) {
      log.error({ err: error, processor_account: processorAccount }, `the events of ${later.name} could not be read`)
      unread.push(processorAccount ?? "the platform's account")
    }
  }
  result.appliedFromWaiting = await retryWaitingEvents(sql, settings, { later, log })
  const waiting = theRow(
    await sql<{ count: number }[]>`
      select count(*)::int as count from processor_events where status = 'waiting'`,
    'a count',
  )
  processorEventsWaiting.set(waiting.count)
  // The run fails, as it would have, once the others are read: the job's failure is counted and retried.
  if (unread.length > 0) throw new Error(`the events of ${unread.join(', ')} at ${later.name} could not be read`)
  return result
}

/** One processor account's events since its cursor, accepted through the inbox; the cursor moved on. */
async function pullEventsOf(
  sql: Sql,
  later: LaterOutcomes,
  settings: LaterSettings,
  log: Logger,
  processorAccount: string | null,
): Promise<{ read: number; fresh: number }> {
  const since = await eventsCursor(sql, later.name, processorAccount)
  if (Date.now() - since.getTime() > EVENTS_KEPT_MS) {
    log.error(
      { since, processor_account: processorAccount },
      `the last events read from ${later.name} are older than it keeps events: some may be lost; the comparison ` +
        `reports what differs`,
    )
  }
  let newest = since
  const result = { read: 0, fresh: 0 }
  for await (const event of later.eventsSince(new Date(since.getTime() - OVERLAP_MS), processorAccount)) {
    result.read++
    const read = await withCapturedFunds(sql, later, event)
    if ((await acceptEvent(sql, read, 'reconciliation', settings)) !== 'duplicate') result.fresh++
    if (event.createdAt > newest) newest = event.createdAt
  }
  await sql`update reconciliation_cursors set events_since = ${newest}, last_run_at = now()
    where processor = ${later.name} and processor_account = ${processorAccount ?? PLATFORM}`
  return result
}

/** The cursors' name for the platform's own account (a primary key cannot hold null). */
const PLATFORM = ''

/**
 * Where a processor account's events were read up to (null: the platform's); the first time, from its first charge
 * (or now).
 */
export async function eventsCursor(sql: Sql, processor: string, processorAccount: string | null = null): Promise<Date> {
  const account = processorAccount ?? PLATFORM
  await sql`
    insert into reconciliation_cursors (processor, processor_account, events_since, compared_since)
    select ${processor}, ${account}, coalesce((select created_at from charges
      where processor_account is not distinct from ${processorAccount} order by seq limit 1), now()), now()
    on conflict (processor, processor_account) do nothing`
  const cursor = theRow(
    await sql<{ events_since: Date }[]>`
      select events_since from reconciliation_cursors
      where processor = ${processor} and processor_account = ${account}`,
    `the cursor of ${processor} ${account}, made above`,
  )
  return cursor.events_since
}
