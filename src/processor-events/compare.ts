// The books held against the processor, both ways: every payment and refund the books recorded since the last
// comparison is at the processor and agrees in status and amount, and every one the processor made for this
// service since then is in the books; undecided charges are looked at whatever their age. What disagrees is
// recorded (src/processor-events/discrepancies.ts), never changed: the events (applied before each comparison) are what
// moves the books. Objects younger than SETTLE_MARGIN_MS are left to the next run: they may still be in flight.
import type { Logger } from 'pino'
import type { Sql } from '../db/connect.js'
import type { ChargeRow } from '../charges/repository.js'
import type { LaterOutcomes, PaymentState, ProcessorStates, RefundState } from '../processor/later-outcomes.js'
import { linkedProcessorAccounts } from '../accounts/api-keys.js'
import type { RefundRow } from '../refunds/repository.js'
import { agreesWith } from './charge-moves.js'
import { countOpenDiscrepancies, type Discrepancy, recordDiscrepancies, resolveDiscrepancies } from './discrepancies.js'
import { eventsCursor } from './reconcile.js'
import { theRow } from '../db/rows.js'

const SETTLE_MARGIN_MS = 10 * 60_000
/** The processor's clock and the database's may disagree: its lists start this much earlier. */
const CLOCK_MARGIN_MS = 60 * 60_000
/** An event that has waited this long for its object is itself a disagreement. */
const WAITING_TOO_LONG = '1 hour'
const BATCH = 5000

const PAYMENT_KINDS = ['payment_differs', 'payment_missing_at_processor']
const REFUND_KINDS = ['refund_differs', 'refund_missing_at_processor']

const NOT_IN_THE_BOOKS = 'its object is not in the books'

export interface Comparison {
  payments: number
  refunds: number
  found: number
  open: number
}

export async function compareWithProcessor(
  sql: Sql,
  later: LaterOutcomes,
  log: Logger,
  options: { settleMarginMs?: number } = {},
): Promise<Comparison> {
  await eventsCursor(sql, later.name)
  const cursor = theRow(
    await sql<{ compared_after_seq: string; refunds_compared_after_seq: string }[]>`
      select compared_after_seq, refunds_compared_after_seq from reconciliation_cursors where processor =
        ${later.name} and processor_account = ''`,
    `the cursor of ${later.name}, made above`,
  )
  const settledBefore = new Date(Date.now() - (options.settleMarginMs ?? SETTLE_MARGIN_MS))
  const fresh = await sql<(ChargeRow & { seq: string })[]>`
    select * from charges where seq > ${cursor.compared_after_seq} and created_at < ${settledBefore} order by seq
      limit ${BATCH}`
  // Undecided charges (a capture or void decided later included), and those found to disagree before (to see
  // whether they agree now), whatever their age.
  const again = await sql<ChargeRow[]>`
    select * from charges where status in ('requires_action', 'processing', 'capture_pending', 'void_pending')
    union
    select c.* from charges c join reconciliation_discrepancies d on d.reference = c.id
    where d.resolved_at is null and d.kind = any(${PAYMENT_KINDS})`
  // A pending refund is compared once the processor has answered it: decided, or received to decide later.
  const refunds = await sql<(RefundRow & { seq: string })[]>`
    select * from refunds where seq > ${cursor.refunds_compared_after_seq} and created_at < ${settledBefore} and
      (status <> 'pending' or processor_reference is not null) order by seq limit ${BATCH}`
  // Refunds the processor decides later and has not yet, and those found to disagree before, whatever their age, as
  // for charges.
  const undecidedRefunds = await sql<RefundRow[]>`
    select * from refunds where status = 'pending' and processor_reference is not null
    union
    select r.* from refunds r join reconciliation_discrepancies d on d.reference = r.id
    where d.resolved_at is null and d.kind = any(${REFUND_KINDS})`
  const booksRefunds = new Map([...refunds, ...undecidedRefunds].map((row) => [row.id, row]))

  const oldest = Math.min(
    settledBefore.getTime(),
    ...fresh.map((row) => row.created_at.getTime()),
    ...[...booksRefunds.values()].map((row) => row.created_at.getTime()),
  )
  const charges = new Map([...fresh, ...again].map((row) => [row.id, row]))
  const named = [...charges.values()].filter(
    (row) => row.processor_reference && !fresh.some((each) => each.id === row.id),
  )
  const states = await statesOnEveryProcessorAccount(sql, later, new Date(oldest - CLOCK_MARGIN_MS), named, charges)
  const settled = (state: { createdAt?: Date | undefined }) => !state.createdAt || state.createdAt < settledBefore

  const found: Discrepancy[] = []
  const agreed: string[] = []
  const payments = new Map(states.payments.map((payment) => [payment.reference, payment]))
  for (const charge of charges.values()) {
    // An operation of the service's own in flight: looked at again once it is recorded (a capture or void decided
    // later is recorded: the charge waits for it, capture_pending or void_pending).
    if (charge.pending_operation && charge.status === 'requires_capture') continue
    // A decline the processor kept no record of: nothing to hold, so nothing that can disagree.
    if (!charge.processor_reference) {
      agreed.push(charge.id)
      continue
    }
    const payment = payments.get(charge.processor_reference)
    const detail = payment
      ? paymentDisagreement(charge, payment)
      : `the processor has no payment ${charge.processor_reference}`
    if (detail)
      found.push({
        kind: payment ? 'payment_differs' : 'payment_missing_at_processor',
        reference: charge.id,
        accountId: charge.account_id,
        detail,
        books: booksOf(charge),
        processor: payment ?? null,
      })
    else agreed.push(charge.id)
  }
  const unmatched = states.payments.filter(
    (payment) => payment.chargeId && !charges.has(payment.chargeId) && settled(payment),
  )
  const claimed = unmatched.flatMap((payment) => (payment.chargeId ? [payment.chargeId] : []))
  const known = new Set(
    claimed.length
      ? (await sql<{ id: string }[]>`select id from charges where id = any(${claimed})`).map((row) => row.id)
      : [],
  )
  for (const payment of unmatched.filter((each) => each.chargeId && !known.has(each.chargeId))) {
    found.push({
      kind: 'payment_not_in_books',
      reference: payment.reference,
      accountId: null,
      detail:
        `the processor's payment ${payment.reference} (${payment.status}, ${payment.amountCents}) for charge ` +
        `${payment.chargeId} is not in the books`,
      books: null,
      processor: payment,
    })
  }
  const refundsFound = await refundDisagreements(sql, [...booksRefunds.values()], states.refunds.filter(settled))
  found.push(...refundsFound)
  const refundsDiffering = new Set(refundsFound.map((each) => each.reference))
  const refundsAgreed = [...booksRefunds.keys()].filter((id) => !refundsDiffering.has(id))
  found.push(...(await eventsWaitingTooLong(sql)))

  const fresher = await recordDiscrepancies(sql, found, log)
  await resolveDiscrepancies(sql, PAYMENT_KINDS, agreed)
  await resolveDiscrepancies(sql, REFUND_KINDS, refundsAgreed)
  await sql`
    update reconciliation_discrepancies set resolved_at = now()
    where resolved_at is null and kind = 'event_waiting' and reference not in (select id from processor_events where
      status = 'waiting')`
  await sql`
    update reconciliation_cursors set
      compared_after_seq = greatest(compared_after_seq, ${fresh.at(-1)?.seq ?? 0}),
      refunds_compared_after_seq = greatest(refunds_compared_after_seq, ${refunds.at(-1)?.seq ?? 0}),
      compared_since = now(), last_run_at = now()
    where processor = ${later.name} and processor_account = ''`
  return { payments: charges.size, refunds: refunds.length, found: fresher, open: await countOpenDiscrepancies(sql) }
}

function paymentDisagreement(charge: ChargeRow, payment: PaymentState): string | undefined {
  if (!agreesWith(charge.status, payment.status))
    return `the books say ${charge.status}, the processor ${payment.status}`
  if (payment.amountCents !== charge.amount_cents)
    return `the books say ${charge.amount_cents}, the processor ${payment.amountCents}`
  if (charge.status === 'succeeded' && payment.amountCapturedCents !== charge.amount_captured_cents) {
    return `the books say ${charge.amount_captured_cents} captured, the processor ${payment.amountCapturedCents}`
  }
  return undefined
}

async function refundDisagreements(sql: Sql, books: RefundRow[], processor: RefundState[]): Promise<Discrepancy[]> {
  const found: Discrepancy[] = []
  const atProcessor = new Map(processor.map((refund) => [refund.reference, refund]))
  for (const refund of books) {
    const theirs = refund.processor_reference ? atProcessor.get(refund.processor_reference) : undefined
    if (!theirs) {
      // Listed from the oldest refund compared: one the processor has must be in its list.
      found.push({
        kind: 'refund_missing_at_processor',
        reference: refund.id,
        accountId: refund.account_id,
        detail: `the processor has no refund ${refund.processor_reference}`,
        books: refund,
        processor: null,
      })
      continue
    }
    const failed = theirs.status === 'failed' || theirs.status === 'canceled'
    // Decided at the processor and still pending here: its news has not come (yet).
    const undecidedHere = refund.status === 'pending' && theirs.status !== 'pending'
    if ((refund.status === 'failed') !== failed || refund.amount_cents !== theirs.amountCents || undecidedHere) {
      found.push({
        kind: 'refund_differs',
        reference: refund.id,
        accountId: refund.account_id,
        detail:
          `the books say ${refund.status} ${refund.amount_cents}, the processor ${theirs.status} ` +
          `${theirs.amountCents}`,
        books: refund,
        processor: theirs,
      })
    }
  }
  // Every refund the processor made for this service is in the books: by its operation id, or (made at the
  // processor) by its reference.
  const ours = processor.filter((refund) => refund.operationId)
  const outside = processor.filter((refund) => !refund.operationId)
  const recorded = new Set([
    ...(ours.length
      ? await sql<{ key: string }[]>`select operation_id::text as key from refunds where operation_id =
          any(${ours.map((refund) => refund.operationId ?? '')}::uuid[])`
      : []
    ).map((row) => row.key),
    ...(outside.length
      ? await sql<
          { key: string }[]
        >`select processor_reference as key from refunds where operation_id is null and processor_reference =
          any(${outside.map((refund) => refund.reference)})`
      : []
    ).map((row) => row.key),
  ])
  for (const refund of processor) {
    if (recorded.has(refund.operationId ?? refund.reference)) continue
    // A refund of a payment this service did not make is not the books' business.
    if (!refund.operationId && !refund.chargeId) continue
    found.push({
      kind: 'refund_not_in_books',
      reference: refund.reference,
      accountId: null,
      detail:
        `the processor's refund ${refund.reference} (${refund.status}, ${refund.amountCents}) of payment ` +
        `${refund.paymentReference} is not in the books`,
      books: null,
      processor: refund,
    })
  }
  return found
}

async function eventsWaitingTooLong(sql: Sql): Promise<Discrepancy[]> {
  const rows = await sql<{ id: string; type: string; note: string | null; changes: unknown }[]>`
    select id, type, note, changes from processor_events where status = 'waiting' and received_at < now() -
      ${WAITING_TOO_LONG}::interval`
  return rows.map((row) => ({
    kind: 'event_waiting',
    reference: row.id,
    accountId: null,
    detail: `the processor's event ${row.id} (${row.type}) still waits: ${row.note ?? NOT_IN_THE_BOOKS}`,
    books: null,
    processor: row.changes,
  }))
}

function booksOf(charge: ChargeRow) {
  const { id, account_id, status, amount_cents, amount_captured_cents, amount_refunded_cents, processor_reference } =
    charge
  return { id, account_id, status, amount_cents, amount_captured_cents, amount_refunded_cents, processor_reference }
}

/**
 * What the processor holds now on the platform's own account and on every connected account an account is linked to
 * (or a charge was made on): each processor account's payments and refunds are its own list (Stripe Connect).
 */
async function statesOnEveryProcessorAccount(
  sql: Sql,
  later: LaterOutcomes,
  since: Date,
  named: ChargeRow[],
  charges: Map<string, ChargeRow>,
): Promise<ProcessorStates> {
  const processorAccounts = new Set<string | null>([
    null,
    ...(await linkedProcessorAccounts(sql)),
    ...[...charges.values()].map((row) => row.processor_account),
  ])
  const states = await Promise.all(
    [...processorAccounts].map((processorAccount) => {
      const references = named.flatMap((row) =>
        row.processor_account === processorAccount && row.processor_reference ? [row.processor_reference] : [],
      )
      // Not skipped when unreadable: its charges would be reported missing at the processor. The run fails, naming it.
      return later.statesSince(since, references, processorAccount).catch((error: unknown) => {
        const which = processorAccount ?? "the platform's account"
        throw new Error(`the payments of ${which} at ${later.name} could not be read`, { cause: error })
      })
    }),
  )
  return { payments: states.flatMap((each) => each.payments), refunds: states.flatMap((each) => each.refunds) }
}
