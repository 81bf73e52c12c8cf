// The checker: after the faults stopped and everything settled, the recorded history and the books are judged
// against the service's promises. Each property names the operations (their keys) that break it.
import type { Sql } from '../../src/db/connect.js'
import { payoutReport } from '../../src/processor-events/payout-report.js'
import type { StripeTestServer } from '../helpers/stripe/server.js'
import type { Operation } from './clients.js'

export interface Judged {
  stack: string
  sql: Sql
  accountId: string
  operations: Operation[]
  /** The Stripe test server, when this stack's processor is Stripe; otherwise the simulated processor's tables. */
  stripe: StripeTestServer | undefined
  /** webhook-id of every delivery the stack's endpoint received. */
  delivered: Set<string>
}

export type Violations = Map<string, string[]>

const RETRIED_CONFLICTS = ['idempotency-request-in-flight', 'charge-operation-in-progress']

export async function check(judged: Judged, violations: Violations): Promise<void> {
  const add = (property: string, detail: string) =>
    violations.set(property, [...(violations.get(property) ?? []), `${judged.stack}: ${detail}`])
  const { sql, accountId, operations } = judged

  for (const operation of operations) {
    const label = `${operation.kind} ${operation.key}`
    for (const attempt of operation.attempts) {
      if (attempt.status === undefined) continue
      if (attempt.status >= 500 && (attempt.status !== 503 || !attempt.retryAfter))
        add('no 5xx but 503 with Retry-After', `${label}: ${attempt.status} ${attempt.text?.slice(0, 300)}`)
      if (attempt.status >= 400 && attempt.status < 500 && !expectedRefusal(attempt.status, attempt.text)) {
        add('no same-body retry refused', `${label}: ${attempt.status} ${attempt.text?.slice(0, 300)}`)
      }
    }
    const finals = operation.attempts.filter((attempt) => attempt.status !== undefined && isOutcome(attempt.status))
    if (finals.some((attempt) => attempt.text !== finals[0]!.text || attempt.status !== finals[0]!.status)) {
      add(
        'replays equal the first answer, byte for byte',
        `${label}: ${[...new Set(finals.map((attempt) => `${attempt.status} ${attempt.text}`))].join(' / ')}`,
      )
    }
    if (operation.end === 'unsettled')
      add(
        'every operation reaches an answer',
        `${label}: no answer a retry cannot change in ${operation.attempts.length} attempts`,
      )
  }

  // Every answer a client saw is the key's stored response, and the object it names is in the books.
  const answered = operations.filter(
    (operation) => operation.end === 'final' && operation.status !== undefined && isOutcome(operation.status),
  )
  const stored = answered.length
    ? await sql<{ key: string; response_status: number; response_body: Buffer | null }[]>`
        select key, response_status, response_body from idempotency_keys where account_id = ${accountId} and key in
          ${sql(answered.map((operation) => operation.key))}`
    : []
  const storedByKey = new Map(stored.map((row) => [row.key, row]))
  const charges = new Map(
    (
      await sql<
        BookCharge[]
      >`select id, status, amount_cents, amount_captured_cents, amount_refunded_cents, amount_refund_pending_cents,
        processor_reference from charges where account_id = ${accountId}`
    ).map((row) => [row.id, row]),
  )
  const refunds = new Map(
    (
      await sql<
        { id: string; charge_id: string; amount_cents: number; status: string }[]
      >`select id, charge_id, amount_cents, status from refunds where account_id = ${accountId}`
    ).map((row) => [row.id, row]),
  )
  for (const operation of answered) {
    const label = `${operation.kind} ${operation.key}`
    const row = storedByKey.get(operation.key)
    if (!row || row.response_status !== operation.status || row.response_body?.toString('utf8') !== operation.text) {
      add(
        'every answer is the stored response of its key',
        `${label}: the client saw ${operation.status}, the key holds ${row ? row.response_status : 'nothing'}`,
      )
    }
    const body = JSON.parse(operation.text!) as { id?: string; charge?: string; status?: string; amount_cents?: number }
    const problem = operation.status === 402
    const id = problem ? body.charge : body.id
    if (operation.kind === 'refund' && !problem) {
      if (refunds.get(id!)?.amount_cents !== body.amount_cents)
        add('every acknowledged outcome is in the books', `${label}: refund ${id} of ${body.amount_cents} is not`)
      continue
    }
    // A 402 is a problem whose charge failed; its `status` is the HTTP status.
    const seen = problem ? 'failed' : body.status!
    const charge = charges.get(id!)
    if (!charge)
      add('every acknowledged outcome is in the books', `${label}: charge ${id} (${operation.status}) is not`)
    else if (!reachable(seen, charge.status))
      add(
        'every acknowledged outcome is in the books',
        `${label}: the client saw ${seen}, the books say ${charge.status}`,
      )
  }

  // Nothing left in flight, and every event delivered at least once.
  const inFlight = await sql<
    { key: string }[]
  >`select key from idempotency_keys where account_id = ${accountId} and completed_at is null`
  for (const row of inFlight)
    add('every key whose operation may have gone out is settled', `${row.key} is still in flight`)
  const pending = [...charges.values()].filter((charge) => charge.amount_refund_pending_cents > 0)
  for (const charge of pending)
    add(
      'every key whose operation may have gone out is settled',
      `charge ${charge.id} still has ${charge.amount_refund_pending_cents} pending refund`,
    )
  const events = await sql<{ id: string; type: string }[]>`select id, type from events where account_id = ${accountId}`
  for (const event of events)
    if (!judged.delivered.has(event.id))
      add('every event reached its webhook endpoint', `${event.type} ${event.id} never arrived`)

  // Every movement of money the books hold is posted, once, and each posting balances (docs/ledger.md).
  const posted = await sql<{ id: string; captured: string; refunded: string }[]>`
    select c.id,
      (select coalesce(sum(t.amount_cents), 0) from ledger_transactions t
       where t.account_id = c.account_id and t.source = c.id and t.type = 'charge') as captured,
      (select coalesce(-sum(t.amount_cents), 0) from ledger_transactions t
       join refunds r on r.account_id = t.account_id and r.id = t.source
       where r.account_id = c.account_id and r.charge_id = c.id) as refunded
    from charges c where c.account_id = ${accountId}`
  for (const row of posted) {
    const charge = charges.get(row.id)!
    if (Number(row.captured) !== charge.amount_captured_cents || Number(row.refunded) !== charge.amount_refunded_cents)
      add(
        'the ledger equals the books',
        `charge ${row.id}: books captured ${charge.amount_captured_cents} refunded ${charge.amount_refunded_cents}, ` +
          `ledger ${row.captured} and ${row.refunded}`,
      )
  }
  const unbalanced = await sql<{ id: string }[]>`
    select t.id from ledger_transactions t
    join ledger_entries e on e.account_id = t.account_id and e.transaction_id = t.id
    where t.account_id = ${accountId}
    group by t.id, t.net_cents
    having sum(e.amount_cents) <> 0 or coalesce(sum(e.amount_cents) filter (where e.ledger_account = 'balance'), 0)
      <> t.net_cents`
  for (const row of unbalanced) add('the ledger equals the books', `ledger transaction ${row.id} does not balance`)

  // Every payout reconciles to the cent, and the last one paid out everything: no account's balance is left.
  const payouts = await payoutReport(sql, new Date(Date.now() - 86_400_000))
  for (const line of payouts)
    for (const difference of [...line.differences, ...line.fee_differences.map((fee) => fee.detail)])
      add('every payout reconciles to the cent', `payout ${line.payout}: ${difference}`)
  const [left] = await sql<{ cents: string }[]>`
    select coalesce(sum(amount_cents), 0) as cents from ledger_entries where account_id = ${accountId} and
      ledger_account = 'balance'`
  if (payouts.length > 0 && Number(left?.cents) !== 0)
    add('every payout reconciles to the cent', `the account's balance is ${left?.cents} after everything was paid out`)

  // The books equal the processor's ledger, both ways, and each money movement came from one key of ours.
  const ledger = judged.stripe ? stripeLedger(judged.stripe, accountId) : await simulatedLedger(sql, accountId)
  const operationIds = new Set(
    (await sql<{ operation_id: string }[]>`select operation_id::text from idempotency_keys`).map(
      (row) => row.operation_id,
    ),
  )
  const perKey = new Map<string, number>()
  for (const key of ledger.movementKeys) perKey.set(key, (perKey.get(key) ?? 0) + 1)
  for (const [key, count] of perKey) {
    if (count > 1) add('at most one money movement per key', `operation ${key} moved money ${count} times`)
    // A lookup's probe is cancelled under the operation's id with a suffix (src/processor/stripe/stripe.ts).
    if (!operationIds.has(key.split(':')[0]!))
      add('at most one money movement per key', `a movement under ${key}, which no key of the books names`)
  }
  const byReference = new Map(
    [...charges.values()]
      .filter((charge) => charge.processor_reference)
      .map((charge) => [charge.processor_reference!, charge]),
  )
  for (const [reference, payment] of ledger.payments) {
    const charge = byReference.get(reference)
    if (!charge) {
      if (payment.captured > 0 || payment.held)
        add('the books equal the processor', `payment ${reference} at the processor has no charge in the books`)
      continue
    }
    const refunded = charge.amount_refunded_cents + charge.amount_refund_pending_cents
    if (charge.amount_captured_cents !== payment.captured || refunded !== payment.refunded) {
      add(
        'the books equal the processor',
        `charge ${charge.id}: books captured ${charge.amount_captured_cents} refunded ${refunded}, processor ` +
          `${payment.captured} and ${payment.refunded}`,
      )
    }
  }
  for (const charge of byReference.values()) {
    if (!ledger.payments.has(charge.processor_reference!) && charge.status !== 'failed')
      add('the books equal the processor', `charge ${charge.id} (${charge.status}) is unknown to the processor`)
  }
}

interface BookCharge {
  id: string
  status: string
  amount_cents: number
  amount_captured_cents: number
  amount_refunded_cents: number
  amount_refund_pending_cents: number
  processor_reference: string | null
}

interface Ledger {
  /** Per payment: what it captured, what was refunded of it, and whether an authorization still holds money. */
  payments: Map<string, { captured: number; refunded: number; held: boolean }>
  /** The idempotency key of each movement of money. */
  movementKeys: string[]
}

/** The account's operations at the simulated processor, and those under a key no account of the books names. */
async function simulatedLedger(sql: Sql, accountId: string): Promise<Ledger> {
  const rows = await sql<
    {
      key: string
      kind: string
      reference: string | null
      charge_reference: string | null
      amount: number | null
      status: string | null
    }[]
  >`
    select idempotency_key as key, kind, outcome->>'processorReference' as reference, parameters->>'charge_reference'
      as charge_reference,
           (parameters->>'amount_cents')::int as amount, outcome->>'status' as status
    from simulated_processor.operations o
    where o.idempotency_key in (select operation_id::text from idempotency_keys where account_id = ${accountId})
       or not exists (select 1 from idempotency_keys k where k.operation_id::text = o.idempotency_key)`
  const payments: Ledger['payments'] = new Map()
  const movementKeys: string[] = []
  for (const row of rows.filter((row) => row.kind === 'charge' || row.kind === 'authorization')) {
    if (row.status === 'failed' || !row.reference) continue
    movementKeys.push(row.key)
    payments.set(row.reference, {
      captured: row.kind === 'charge' ? row.amount! : 0,
      refunded: 0,
      held: row.kind === 'authorization',
    })
  }
  for (const row of rows.filter((row) => row.kind !== 'charge' && row.kind !== 'authorization')) {
    movementKeys.push(row.key)
    const payment = payments.get(row.charge_reference!)
    if (!payment) continue
    if (row.kind === 'capture') Object.assign(payment, { captured: row.amount ?? 0, held: false })
    if (row.kind === 'void') payment.held = false
    if (row.kind === 'refund') payment.refunded += row.amount ?? 0
  }
  return { payments, movementKeys }
}

function stripeLedger(server: StripeTestServer, accountId: string): Ledger {
  const payments: Ledger['payments'] = new Map()
  for (const intent of server.ledger.paymentIntents.values()) {
    if (intent.metadata.account_id !== accountId || intent.metadata.lookup_probe !== undefined) continue
    payments.set(intent.id, {
      captured: intent.amount_received,
      refunded: server.ledger.refundedOf(intent.id),
      held: intent.status === 'requires_capture',
    })
  }
  const movementKeys = server.ledger.movements.map(
    (movement) => movement.idempotencyKey ?? `(none: ${movement.kind} ${movement.object})`,
  )
  return { payments, movementKeys }
}

/** An answer a retry cannot change: an outcome, stored under the key. */
function isOutcome(status: number): boolean {
  return (status >= 200 && status < 300) || status === 402
}

/** The refusals a careful client can meet: a decline, and the conflicts its retry waits out. */
function expectedRefusal(status: number, text: string | undefined): boolean {
  if (status === 402 || status === 408 || status === 429) return true
  if (status !== 409) return false
  const type = (JSON.parse(text ?? '{}') as { type?: string }).type ?? ''
  return RETRIED_CONFLICTS.some((slug) => type.endsWith(`/${slug}`))
}

/** Whether a charge answered `seen` can be `now`: statuses only move forward. */
function reachable(seen: string, now: string): boolean {
  if (seen === now) return true
  return seen === 'requires_capture' && ['succeeded', 'voided', 'expired'].includes(now)
}
