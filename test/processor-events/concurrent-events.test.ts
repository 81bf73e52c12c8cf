// Two of the processor's events about one payment, applied at the same instant, end as if one had come after the
// other: for every pair of related events (the payment's, its refund's, its dispute's, its capture's), with the
// charge recorded and with the charge not recorded yet (both wait, then two reconciliation runs apply them at
// once), the books and the service's events equal one of the two orders applied one by one. No pair fails
// (Stripe sends charge.refunded and refund.created for one dashboard refund together: both used to insert the
// refund, and the second failed on its unique index, a 500 to the webhook).
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/app.js'
import { LATER_SETTINGS } from '../helpers/at-processor.js'
import { newId } from '../../src/db/ids.js'
import { recordCharge } from '../../src/charges/record-charge.js'
import { acceptEvent, retryWaitingEvents } from '../../src/processor-events/inbox.js'
import type { ChargeOutcome } from '../../src/processor/processor.js'
import type { ProcessorChange, ProcessorEvent } from '../../src/processor/later-outcomes.js'

const suite = useTestApp()
const ROUNDS = 8

interface Payment {
  chargeId: string
  reference: string
}

interface Pair {
  name: string
  /** How the charge was recorded: settled, an authorization (capture: false), or undecided. */
  charge: 'succeeded' | 'authorized' | 'processing'
  events(payment: Payment): [ProcessorChange[], ProcessorChange[]]
}

const payment = (
  p: Payment,
  status: 'succeeded' | 'canceled' | 'failed' | 'processing',
  captured = 0,
): ProcessorChange => ({
  object: 'payment',
  reference: p.reference,
  chargeId: p.chargeId,
  status,
  amountCents: 5000,
  amountCapturedCents: captured,
  ...(status === 'failed' ? { failureCode: 'card_declined', failureMessage: 'Declined.' } : {}),
})
const refund = (
  p: Payment,
  reference: string,
  status: 'succeeded' | 'failed',
  amountCents = 1200,
): ProcessorChange => ({
  object: 'refund',
  reference,
  paymentReference: p.reference,
  chargeId: p.chargeId,
  status,
  amountCents,
  ...(status === 'failed' ? { failureReason: 'expired_or_canceled_card' } : {}),
})
/** A dispute as an event tells it: with the money it says moved so far (Stripe: funds_withdrawn, funds_reinstated). */
const dispute = (
  p: Payment,
  reference: string,
  status: 'needs_response' | 'under_review' | 'won' | 'lost',
  moved: 'nothing' | 'withdrawn' | 'reinstated' = 'withdrawn',
): ProcessorChange => ({
  object: 'dispute',
  reference,
  paymentReference: p.reference,
  chargeId: p.chargeId,
  status,
  amountCents: 5000,
  reason: 'fraudulent',
  ...(moved !== 'nothing' && { withdrawal: { amountCents: 5000, fees: [{ amountCents: 1500, description: 'fee' }] } }),
  ...(moved === 'reinstated' && { reinstatement: { amountCents: 5000, fees: [] } }),
})

type Told = [Parameters<typeof dispute>[2], Parameters<typeof dispute>[3]?]

/** The same dispute told twice, each time with its status and the money moved so far. */
const oneDisputeTwice =
  (first: Told, second: Told) =>
  (p: Payment): [ProcessorChange[], ProcessorChange[]] => {
    const dp = `dp_${randomUUID()}`
    return [[dispute(p, dp, ...first)], [dispute(p, dp, ...second)]]
  }

const PAIRS: Pair[] = [
  {
    name: 'charge.refunded and refund.created of one dashboard refund',
    charge: 'succeeded',
    events: (p) => {
      const re = `re_${randomUUID()}`
      return [[refund(p, re, 'succeeded')], [refund(p, re, 'succeeded')]]
    },
  },
  {
    name: 'two dashboard refunds, each told by charge.refunded listing both',
    charge: 'succeeded',
    events: (p) => {
      const [first, second] = [`re_${randomUUID()}`, `re_${randomUUID()}`]
      return [
        [refund(p, first, 'succeeded', 1000)],
        [refund(p, first, 'succeeded', 1000), refund(p, second, 'succeeded', 700)],
      ]
    },
  },
  {
    name: 'a dashboard refund and its failure',
    charge: 'succeeded',
    events: (p) => {
      const re = `re_${randomUUID()}`
      return [[refund(p, re, 'succeeded')], [refund(p, re, 'failed')]]
    },
  },
  {
    name: 'a dispute opened and its update',
    charge: 'succeeded',
    events: oneDisputeTwice(['needs_response'], ['under_review']),
  },
  {
    name: 'charge.dispute.created, which moves no money, and charge.dispute.funds_withdrawn',
    charge: 'succeeded',
    events: oneDisputeTwice(['needs_response', 'nothing'], ['needs_response', 'withdrawn']),
  },
  {
    name: 'a dispute lost, and its funds withdrawn told late',
    charge: 'succeeded',
    events: oneDisputeTwice(['lost', 'withdrawn'], ['needs_response', 'withdrawn']),
  },
  {
    name: 'charge.dispute.funds_reinstated and charge.dispute.closed of a dispute won',
    charge: 'succeeded',
    events: oneDisputeTwice(['won', 'reinstated'], ['won', 'reinstated']),
  },
  {
    name: 'a dispute and a dashboard refund',
    charge: 'succeeded',
    events: (p) => [
      [dispute(p, `dp_${randomUUID()}`, 'needs_response')],
      [refund(p, `re_${randomUUID()}`, 'succeeded')],
    ],
  },
  {
    name: 'a capture in the dashboard and a refund of it',
    charge: 'authorized',
    events: (p) => [[payment(p, 'succeeded', 5000)], [refund(p, `re_${randomUUID()}`, 'succeeded')]],
  },
  {
    name: 'a capture in the dashboard and a dispute',
    charge: 'authorized',
    events: (p) => [[payment(p, 'succeeded', 5000)], [dispute(p, `dp_${randomUUID()}`, 'needs_response')]],
  },
  {
    name: 'an authorization voided in the dashboard and captured (whichever Stripe took)',
    charge: 'authorized',
    events: (p) => [[payment(p, 'canceled')], [payment(p, 'succeeded', 5000)]],
  },
  {
    name: 'a bank debit settled and disputed',
    charge: 'processing',
    events: (p) => [[payment(p, 'succeeded', 5000)], [dispute(p, `dp_${randomUUID()}`, 'needs_response')]],
  },
  {
    name: 'a bank debit that failed, and its processing told late',
    charge: 'processing',
    events: (p) => [[payment(p, 'failed')], [payment(p, 'processing')]],
  },
]

const OUTCOMES: Record<Pair['charge'], ChargeOutcome> = {
  succeeded: { status: 'succeeded', processorReference: '' },
  authorized: { status: 'succeeded', processorReference: '' },
  processing: { status: 'processing', processorReference: '' },
}

/** Records the charge as the route does (its row and its event in one transaction). */
async function recordChargeOf(pair: Pair, p: Payment): Promise<void> {
  const outcome = { ...OUTCOMES[pair.charge], processorReference: p.reference }
  const input = {
    amount_cents: 5000,
    currency: 'usd' as const,
    source: 'pm_card_visa',
    capture: pair.charge !== 'authorized',
  }
  const expires = pair.charge === 'authorized' ? new Date(Date.now() + 86_400_000) : undefined
  await suite.context.sql.begin((tx) =>
    recordCharge(
      tx,
      p.chargeId,
      { id: suite.account.id, processorAccount: null },
      input,
      outcome,
      LATER_SETTINGS.pricing,
      expires,
    ),
  )
}

const eventOf = (changes: ProcessorChange[]): ProcessorEvent => ({
  id: `evt_${randomUUID()}`,
  type: 'test.event',
  createdAt: new Date(),
  changes,
})

/** What the books say of the payment: the charge, its refunds, and the service's events about it, in order. */
async function booksOf(p: Payment) {
  const { sql } = suite.context
  const [charge] = await sql`
    select status, amount_captured_cents, amount_refunded_cents, failure_code, dispute->>'status' as dispute
    from charges where id = ${p.chargeId}`
  const refunds = await sql`
    select processor_reference, amount_cents, status, origin from refunds where charge_id = ${p.chargeId} order by
      amount_cents, status`
  const events = (
    await sql<{ type: string }[]>`
    select type from events where body::jsonb->'data'->'object'->>'id' = ${p.chargeId} order by seq`
  ).map((row) => row.type)
  // The money posted for the charge and its disputes and refunds (by type: their references are each run's own).
  const postings = await sql`
    select t.type, t.amount_cents::int, t.fee_cents::int from ledger_transactions t
    where t.account_id = ${suite.account.id} and (t.source = ${p.chargeId}
      or t.source in (select id from refunds where charge_id = ${p.chargeId})
      or t.source = (select dispute->>'processor_reference' from charges where id = ${p.chargeId}))
    order by t.type, t.amount_cents`
  // The references are each run's own: compared by position.
  return { charge, refunds: refunds.map(({ processor_reference: _, ...rest }) => rest), events, postings }
}

/** The pair applied one by one in the given order, on a payment of its own: one of the two right answers. */
async function serially(pair: Pair, order: [0, 1] | [1, 0]) {
  const p = { chargeId: newId('ch'), reference: `pi_${randomUUID()}` }
  await recordChargeOf(pair, p)
  const events = pair.events(p)
  for (const index of order) await acceptEvent(suite.context.sql, eventOf(events[index]), 'webhook', LATER_SETTINGS)
  await retryWaitingEvents(suite.context.sql, LATER_SETTINGS)
  await retryWaitingEvents(suite.context.sql, LATER_SETTINGS)
  return booksOf(p)
}

describe.each(PAIRS)('when $name arrive at the same instant', (pair) => {
  it(`with the charge recorded, then each is applied once, as if one came after the other (${ROUNDS} rounds)`, async () => {
    const serial = [await serially(pair, [0, 1]), await serially(pair, [1, 0])]
    for (let round = 0; round < ROUNDS; round++) {
      const p = { chargeId: newId('ch'), reference: `pi_${randomUUID()}` }
      await recordChargeOf(pair, p)
      const [first, second] = pair.events(p)
      const accepted = await Promise.all(
        [first, second].map((changes) => acceptEvent(suite.context.sql, eventOf(changes), 'webhook', LATER_SETTINGS)),
      )
      expect(accepted.every((status) => status !== 'duplicate')).toBe(true)
      // What waited (a refund of a capture not told yet) is applied by the next reconciliation.
      await retryWaitingEvents(suite.context.sql, LATER_SETTINGS)
      expect(serial).toContainEqual(await booksOf(p))
    }
  })

  it(`with the charge not recorded yet, then both wait, and two reconciliations at once apply each once (${ROUNDS} rounds)`, async () => {
    const serial = [await serially(pair, [0, 1]), await serially(pair, [1, 0])]
    for (let round = 0; round < ROUNDS; round++) {
      const p = { chargeId: newId('ch'), reference: `pi_${randomUUID()}` }
      const [first, second] = pair.events(p)
      const accepted = await Promise.all(
        [first, second].map((changes) => acceptEvent(suite.context.sql, eventOf(changes), 'webhook', LATER_SETTINGS)),
      )
      expect(accepted).toEqual(['waiting', 'waiting'])
      await recordChargeOf(pair, p)
      await Promise.all([
        retryWaitingEvents(suite.context.sql, LATER_SETTINGS),
        retryWaitingEvents(suite.context.sql, LATER_SETTINGS),
      ])
      await retryWaitingEvents(suite.context.sql, LATER_SETTINGS)
      expect(serial).toContainEqual(await booksOf(p))
    }
  })
})
