// The inbox of the processor's events: each is written once (its id deduplicates a webhook delivered twice, and
// the same event listed again by the reconciliation) and applied in the same transaction as its changes and the
// service's own events, so an event is either recorded with what it did, or not at all (and then its sender
// retries). One whose object is not in the books yet waits, and is applied again until it is.
import type { Logger } from 'pino'
import type { Sql, Transaction } from '../db/connect.js'
import { processorEvents } from '../observability/metrics.js'
import { isHeldUncaptured } from '../charges/repository.js'
import type { LaterOutcomes, ProcessorChange, ProcessorEvent } from '../processor/later-outcomes.js'
import { ProcessorUnavailableError } from '../processor/processor.js'
import { type Applied, applyChange, type LaterSettings } from './apply.js'
import { accountLinkedTo } from '../accounts/api-keys.js'

export type Via = 'webhook' | 'reconciliation'
export type Accepted = Applied['status'] | 'duplicate'

/** Records the event and applies it; 'duplicate' when it was recorded before (by either way in). */
export async function acceptEvent(
  sql: Sql,
  event: ProcessorEvent,
  via: Via,
  settings: LaterSettings,
): Promise<Accepted> {
  const result = await sql.begin(async (tx) => {
    const [fresh] = await tx`
      insert into processor_events (id, type, processor_created_at, received_via, changes, status, processor_account)
      values (${event.id}, ${event.type}, ${event.createdAt}, ${via}, ${tx.json(event.changes as never)}, 'waiting',
        ${event.processorAccount ?? null})
      on conflict (id) do nothing
      returning id`
    if (!fresh) return undefined
    return settle(tx, event.id, await applyAll(tx, event, settings))
  })
  const status = result ? committed(result) : 'duplicate'
  processorEvents.inc({ via, status })
  return status
}

/**
 * A payment the processor captured on its own time (an authentication passed, a debit settled, a capture made in its
 * dashboard): its event names the payment, not what the processor kept of it, so the fee and the day the rest is
 * available are read from the processor first, outside the transaction (a call never holds one open). Only for a
 * charge the books hold and have not captured: the event of a charge the service captured itself, told again by the
 * reconciliation, or ahead of the answer it follows (the answer carries the funds), costs no call. One that waits is
 * read again when it is applied again. Where the processor does not say, the pricing's fee is posted and the payout
 * that carries it names any difference.
 */
export async function withCapturedFunds(
  sql: Sql,
  later: Pick<LaterOutcomes, 'fundsOf'> | undefined,
  event: ProcessorEvent,
): Promise<ProcessorEvent> {
  const fundsOf = later?.fundsOf
  if (!fundsOf) return event
  const changes = await Promise.all(
    event.changes.map(async (change) => {
      if (change.object !== 'payment' || change.status !== 'succeeded' || !change.chargeId || change.funds)
        return change
      if (!(await isHeldUncaptured(sql, change.chargeId))) return change
      const funds = await fundsOf(change, event.processorAccount ?? null)
      return funds ? { ...change, funds } : change
    }),
  )
  return { ...event, changes }
}

/**
 * Applies again the events that wait for their object, oldest first (with what the processor kept of a payment it
 * captured, read again: withCapturedFunds); how many of them applied now.
 */
export async function retryWaitingEvents(
  sql: Sql,
  settings: LaterSettings,
  options: { later?: Pick<LaterOutcomes, 'fundsOf'>; log?: Logger; batchSize?: number } = {},
): Promise<number> {
  const waiting = await sql<
    {
      id: string
      type: string
      changes: ProcessorEvent['changes']
      processor_created_at: Date
      processor_account: string | null
    }[]
  >`
    select id, type, changes, processor_created_at, processor_account from processor_events where status = 'waiting'
      order by received_at limit ${options.batchSize ?? 100}`
  let applied = 0
  for (const row of waiting) {
    const told = {
      id: row.id,
      type: row.type,
      createdAt: row.processor_created_at,
      changes: row.changes,
      ...(row.processor_account ? { processorAccount: row.processor_account } : {}),
    }
    // The processor not answering the read leaves this event waiting for the next run; the others go on.
    const event = await withCapturedFunds(sql, options.later, told).catch((error: unknown) => {
      if (!(error instanceof ProcessorUnavailableError)) throw error
      options.log?.warn(
        { processor_event: row.id, err: error },
        'a waiting event stays waiting: the processor did not answer',
      )
      return undefined
    })
    if (!event) continue
    const result = await sql.begin(async (tx) => {
      // An event's changes never change once written: only whether it still waits is read again, under its lock.
      const [still] = await tx`
        select id from processor_events where id = ${row.id} and status = 'waiting' for update skip locked`
      if (!still) return undefined
      await tx`update processor_events set attempts = attempts + 1 where id = ${row.id}`
      return settle(tx, row.id, await applyAll(tx, event, settings))
    })
    if (result && committed(result) === 'applied') applied++
  }
  return applied
}

/** Every change of the event; it waits if any change waits (those applied are no-ops when it is applied again). */
async function applyAll(tx: Transaction, event: ProcessorEvent, settings: LaterSettings): Promise<Applied> {
  const processorAccount = event.processorAccount ?? null
  const linkedAccount = processorAccount === null ? undefined : await accountLinkedTo(tx, processorAccount)
  // A connected account no account is linked to (any more) holds nothing of the books: recorded, never applied.
  if (processorAccount !== null && linkedAccount === undefined)
    return { status: 'ignored', note: `${processorAccount} is linked to no account` }
  await lockPayments(tx, event.changes)
  const results: Applied[] = []
  for (const change of event.changes)
    results.push(await applyChange(tx, change, settings, { processorAccount, linkedAccount }))
  const notes = results.flatMap((result) => (result.note ? [result.note] : []))
  // What the changes applied count, whether or not another change of the event waits: they are written.
  const afterCommit = results.flatMap((result) => result.afterCommit ?? [])
  if (results.some((result) => result.status === 'waiting'))
    return { status: 'waiting', note: notes.join('; '), afterCommit }
  if (results.some((result) => result.status === 'applied'))
    return { status: 'applied', ...(notes.length > 0 && { note: notes.join('; ') }), afterCommit }
  return { status: 'ignored', note: notes.join('; ') || `nothing for the books in ${event.type}` }
}

/**
 * Events about one payment are applied one at a time, whatever their types: for one refund made in its dashboard
 * Stripe sends charge.refunded and refund.created at the same instant, and both would look for the refund, find
 * none and insert it. A row lock cannot serialise them, as what they look for may not exist yet (nor may the
 * charge, for an event that overtook the answer): the lock is on the processor's reference of the payment, taken
 * before anything is looked up, for the rest of the transaction. References in order, so two events never wait on
 * each other. Advisory locks of two keys are a space apart from the one-key locks of migrations and the worker.
 */
async function lockPayments(tx: Transaction, changes: ProcessorChange[]): Promise<void> {
  const references = [...new Set(changes.map(lockedReference))].sort()
  for (const reference of references)
    await tx`select pg_advisory_xact_lock(${PAYMENT_LOCK_SPACE}, hashtext(${reference}))`
}
/** A payment's news locks its payment; a payout's locks the payout (events about one payout apply one at a time). */
function lockedReference(change: ProcessorChange): string {
  return change.object === 'payment' || change.object === 'payout' ? change.reference : change.paymentReference
}
/** The first key of the payment locks (any constant of its own): 'pay' in ASCII. */
const PAYMENT_LOCK_SPACE = 0x706179

async function settle(tx: Transaction, id: string, result: Applied): Promise<Applied> {
  const note = result.note?.slice(0, 500) ?? null
  await tx`
    update processor_events set status = ${result.status}, note = ${note}, settled_at =
      ${result.status === 'waiting' ? null : new Date()}
    where id = ${id}`
  return result
}

/** The event's transaction has committed: what its changes count is counted now, once; its status. */
function committed(result: Applied): Applied['status'] {
  for (const count of result.afterCommit ?? []) count()
  return result.status
}
