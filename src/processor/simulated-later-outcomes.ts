// The simulated processor's later outcomes: what happens to its payments after its first answer, the events it
// tells of them, and the controls that make them happen (a customer authenticating, a bank debit settling, a
// dispute closing, a refund made at its "dashboard"). Its ledger keeps each payment's and refund's state once it
// moved (operations.state; null: as the first answer said), its disputes, and its events, which the service reads
// as it reads Stripe's: delivered at once by the control that made them (its "webhook"), or listed later.
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import type { Sql, Transaction } from '../db/connect.js'
import type {
  DisputeState,
  LaterOutcomes,
  PaymentState,
  ProcessorChange,
  ProcessorEvent,
  RefundState,
} from './later-outcomes.js'
import type { ChargeOutcome } from './processor.js'
import { AUTHENTICATION_FAILED, behaviourOf } from './simulated-cards.js'
import { theRow } from '../db/rows.js'

/** What the controls act on: a payment, refund or dispute by the processor's reference. */
export interface SimulatedControls {
  /** The customer authenticates (or gives up): a requires_action payment succeeds, is authorized, or fails. */
  authenticate(reference: string, succeeded: boolean): Promise<ProcessorEvent>
  /** A bank debit settles: a processing payment succeeds or fails, as its source says. */
  settle(reference: string): Promise<ProcessorEvent>
  /** An authorization lapses at the processor (before the service's own expiry voids it). */
  expire(reference: string): Promise<ProcessorEvent>
  /**
   * The payment is canceled at the processor (its dashboard) before it was decided or captured: one awaiting the
   * customer's authentication, a bank debit not settled, an authorization.
   */
  cancel(reference: string): Promise<ProcessorEvent>
  /** A refund made at the processor itself, outside the service; the whole rest of the payment by default. */
  refund(reference: string, amountCents?: number): Promise<ProcessorEvent>
  /** The customer disputes the payment. */
  dispute(reference: string): Promise<ProcessorEvent>
  /** The dispute of the payment is decided. */
  closeDispute(reference: string, outcome: 'won' | 'lost'): Promise<ProcessorEvent>
  /**
   * What a pm_card_decidedLater payment's processor received earlier (its oldest capture, void or refund not decided
   * yet) is decided: performed, or refused (the authorization stands; the refund fails).
   */
  decide(reference: string, performed: boolean): Promise<ProcessorEvent>
  /** The payment as the processor holds it now. */
  payment(reference: string): Promise<PaymentState | undefined>
  /** Where the customer goes back to after authenticating, as the charge request said. */
  returnUrl(reference: string): Promise<string | null>
}

/** A control asked of an object in no state for it (settling a card payment, authenticating twice). */
export class SimulatedControlError extends Error {
  override name = 'SimulatedControlError'
}

export interface PaymentRow {
  idempotency_key: string
  created_at: Date
  kind: 'charge' | 'authorization'
  parameters: { amount_cents: number; source: string; charge_id?: string }
  outcome: ChargeOutcome
  state: PaymentState | null
}

export interface RefundRow {
  idempotency_key: string
  created_at: Date
  /** The charge of its payment (joined in). */
  charge_id?: string | null
  parameters: { charge_reference: string; amount_cents: number; origin?: 'dashboard' }
  outcome: { processorReference: string; decidedLater?: true }
  state: RefundState | null
}

/** What Stripe lets its dashboard cancel: a payment not decided yet, or an authorization not captured. */
const CANCELABLE = new Set<PaymentState['status']>(['requires_action', 'processing', 'requires_capture'])

export function simulatedLater(sql: Sql): {
  later: LaterOutcomes
  controls: SimulatedControls
  afterRefund(tx: Transaction, refund: RefundState): Promise<void>
} {
  /** Moves a payment to its next state and tells it, in one transaction. */
  async function movePayment(
    reference: string,
    type: string,
    next: (payment: PaymentState, row: PaymentRow) => PaymentState,
  ): Promise<ProcessorEvent> {
    return sql.begin(async (tx) => {
      const row = await paymentRow(tx, reference, true)
      if (!row) throw new SimulatedControlError(`no payment ${reference}`)
      const moved = next(paymentState(row), row)
      await tx`update simulated_processor.operations set state = ${tx.json(moved as never)} where idempotency_key =
        ${row.idempotency_key}`
      return tell(tx, type, [moved])
    })
  }

  const controls: SimulatedControls = {
    authenticate: (reference, succeeded) =>
      movePayment(reference, succeeded ? 'payment.authenticated' : 'payment.failed', (payment, row) => {
        if (payment.status !== 'requires_action')
          throw new SimulatedControlError(`payment ${reference} is ${payment.status}: there is nothing to authenticate`)
        const behaviour = behaviourOf(row.parameters.source)
        const declined = behaviour?.kind === 'authenticates' ? behaviour.thenDeclines : undefined
        if (!succeeded) return { ...payment, status: 'failed', ...AUTHENTICATION_FAILED }
        if (declined) return { ...payment, status: 'failed', ...declined }
        return row.kind === 'authorization'
          ? { ...payment, status: 'requires_capture' }
          : { ...payment, status: 'succeeded', amountCapturedCents: payment.amountCents }
      }),
    settle: (reference) =>
      movePayment(reference, 'payment.settled', (payment, row) => {
        const behaviour = behaviourOf(row.parameters.source)
        if (payment.status !== 'processing' || behaviour?.kind !== 'settles_later')
          throw new SimulatedControlError(`payment ${reference} is ${payment.status}: there is nothing to settle`)
        if (behaviour.settles === 'never')
          throw new SimulatedControlError(`payment ${reference} (${row.parameters.source}) stays processing`)
        if (behaviour.settles === 'succeeds')
          return { ...payment, status: 'succeeded', amountCapturedCents: payment.amountCents }
        return { ...payment, status: 'failed', ...behaviour.settles }
      }),
    expire: (reference) =>
      movePayment(reference, 'payment.canceled', (payment) => {
        if (payment.status !== 'requires_capture')
          throw new SimulatedControlError(
            `payment ${reference} is ${payment.status}: there is no authorization to lapse`,
          )
        return { ...payment, status: 'canceled', cancellation: 'expired' }
      }),
    cancel: (reference) =>
      movePayment(reference, 'payment.canceled', (payment) => {
        if (!CANCELABLE.has(payment.status))
          throw new SimulatedControlError(`payment ${reference} is ${payment.status}: it can no longer be canceled`)
        return { ...payment, status: 'canceled', cancellation: 'canceled' }
      }),
    refund: (reference, amountCents) =>
      sql.begin(async (tx) => {
        const row = await paymentRow(tx, reference, true)
        if (!row) throw new SimulatedControlError(`no payment ${reference}`)
        const payment = paymentState(row)
        const { refunded } = theRow(
          await tx<{ refunded: number }[]>`
            select coalesce(sum((parameters->>'amount_cents')::int), 0)::int as refunded from
              simulated_processor.operations
            where kind = 'refund' and parameters->>'charge_reference' = ${reference}
              and coalesce(state->>'status', 'succeeded') <> 'failed'`,
          'a sum',
        )
        const left = payment.status === 'succeeded' ? payment.amountCapturedCents - refunded : 0
        const amount = amountCents ?? left
        if (amount < 1 || amount > left)
          throw new SimulatedControlError(`payment ${reference} has ${left} left to refund, not ${amount}`)
        const refund: RefundState = {
          object: 'refund',
          reference: `sim_re_${randomBytes(12).toString('hex')}`,
          paymentReference: reference,
          status: 'succeeded',
          amountCents: amount,
        }
        if (payment.chargeId) refund.chargeId = payment.chargeId
        await tx`
          insert into simulated_processor.operations (idempotency_key, kind, parameters, outcome)
          values (${`dashboard:${randomUUID()}`}, 'refund',
            ${tx.json({ charge_reference: reference, amount_cents: amount, origin: 'dashboard' })},
                  ${tx.json({ processorReference: refund.reference })})`
        return tell(tx, 'refund.created', [refund])
      }),
    dispute: (reference) =>
      sql.begin(async (tx) => {
        const row = await paymentRow(tx, reference, true)
        const payment = row && paymentState(row)
        if (payment?.status !== 'succeeded')
          throw new SimulatedControlError(
            `payment ${reference} is ${payment?.status ?? 'unknown'}: only a captured payment can be disputed`,
          )
        return openDispute(tx, payment)
      }),
    closeDispute: (reference, outcome) =>
      sql.begin(async (tx) => {
        const [row] = await tx<
          { state: DisputeState }[]
        >`select state from simulated_processor.disputes where payment_reference = ${reference} for update`
        if (!row || row.state.status === 'won' || row.state.status === 'lost')
          throw new SimulatedControlError(`payment ${reference} has no open dispute`)
        // Won: the disputed amount comes back (the fee does not: the pricing's rule, as Stripe's).
        const closed: DisputeState = {
          ...row.state,
          status: outcome,
          ...(outcome === 'won' && row.state.withdrawal && { reinstatement: { amountCents: row.state.amountCents } }),
        }
        await tx`update simulated_processor.disputes set state = ${tx.json(closed as never)} where payment_reference =
          ${reference}`
        return tell(tx, 'dispute.closed', [closed])
      }),
    decide: (reference, performed) =>
      sql.begin(async (tx) => {
        const [received] = await tx<
          { idempotency_key: string; kind: 'capture' | 'void' | 'refund'; amount_cents: number }[]
        >`
          select idempotency_key, kind, (parameters->>'amount_cents')::int as amount_cents
          from simulated_processor.operations
          where kind in ('capture', 'void', 'refund') and parameters->>'charge_reference' = ${reference}
            and outcome->>'decidedLater' = 'true' and state is null
          order by created_at limit 1
          for update`
        if (!received) throw new SimulatedControlError(`payment ${reference} has nothing received to decide`)
        if (received.kind === 'refund') return decideRefund(tx, received.idempotency_key, performed)
        await tx`update simulated_processor.operations set state = ${tx.json({ performed })}
          where idempotency_key = ${received.idempotency_key}`
        if (performed) {
          const settled =
            received.kind === 'capture'
              ? ({ status: 'succeeded', amountCapturedCents: received.amount_cents } as const)
              : ({ status: 'canceled' } as const)
          const moved = await recordSettlement(tx, reference, settled)
          if (!moved) throw new SimulatedControlError(`no payment ${reference}`)
          return tell(tx, received.kind === 'capture' ? 'payment.captured' : 'payment.canceled', [moved])
        }
        const row = await paymentRow(tx, reference, true)
        if (!row) throw new SimulatedControlError(`no payment ${reference}`)
        // The refusal is told with the payment, not kept in its state: it is news of one operation.
        const refused = { operation: received.kind, reason: `the processor refused the ${received.kind}` }
        return tell(tx, `payment.${received.kind}_failed`, [{ ...paymentState(row), refused }])
      }),
    payment: async (reference) => {
      const row = await paymentRow(sql, reference, false)
      return row && paymentState(row)
    },
    returnUrl: async (reference) => {
      const row = await paymentRow(sql, reference, false)
      const action = row?.outcome.status === 'requires_action' ? row.outcome.nextAction : undefined
      return action?.type === 'redirect_to_url' ? action.returnUrl : null
    },
  }

  const later: LaterOutcomes = {
    name: 'simulated',
    // It has no processor accounts but its own: none for a connected account.
    async *eventsSince(since, processorAccount) {
      if (processorAccount !== null) return
      const rows = await sql<{ id: string; type: string; changes: ProcessorChange[]; created_at: Date }[]>`
        select id, type, changes, created_at from simulated_processor.events where created_at >= ${since} order by seq`
      for (const row of rows) yield { id: row.id, type: row.type, createdAt: row.created_at, changes: row.changes }
    },
    async statesSince(since, payments, processorAccount) {
      if (processorAccount !== null) return { payments: [], refunds: [] }
      const paymentRows = await sql<PaymentRow[]>`
        select idempotency_key, created_at, kind, parameters, outcome, state from simulated_processor.operations
        where kind in ('charge', 'authorization') and outcome ? 'processorReference'
          and (created_at >= ${since} or outcome->>'processorReference' = any(${payments}))`
      const refundRows = await sql<RefundRow[]>`
        select r.idempotency_key, r.created_at, r.parameters, r.outcome, r.state, p.parameters->>'charge_id' as
          charge_id
        from simulated_processor.operations r
        left join simulated_processor.operations p on p.kind in ('charge', 'authorization') and
          p.outcome->>'processorReference' = r.parameters->>'charge_reference'
        where r.kind = 'refund' and r.created_at >= ${since}`
      return { payments: paymentRows.map(paymentState), refunds: refundRows.map(refundState) }
    },
  }

  return {
    later,
    controls,
    // pm_card_refundFail: its refunds succeed, then fail.
    async afterRefund(tx, refund) {
      const [payment] = await tx<{ source: string }[]>`
        select parameters->>'source' as source from simulated_processor.operations
        where kind in ('charge', 'authorization') and outcome->>'processorReference' = ${refund.paymentReference}`
      if (payment?.source !== 'pm_card_refundFail') return
      const failed: RefundState = { ...refund, status: 'failed', failureReason: 'expired_or_canceled_card' }
      await tx`update simulated_processor.operations set state = ${tx.json(failed as never)} where
        outcome->>'processorReference' = ${refund.reference} and kind = 'refund'`
      await tell(tx, 'refund.failed', [failed])
    },
  }
}

/** pm_card_createDispute: the customer disputes the payment as soon as it is made. */
export async function disputeAtOnce(
  tx: Transaction,
  reference: string,
  chargeId: string | undefined,
  amountCents: number,
): Promise<void> {
  await openDispute(tx, {
    object: 'payment',
    reference,
    status: 'succeeded',
    amountCents,
    amountCapturedCents: amountCents,
    ...(chargeId ? { chargeId } : {}),
  })
}

async function openDispute(tx: Transaction, payment: PaymentState): Promise<ProcessorEvent> {
  const dispute: DisputeState = {
    object: 'dispute',
    reference: `sim_dp_${createHash('sha256').update(payment.reference).digest('hex').slice(0, 24)}`,
    paymentReference: payment.reference,
    status: 'needs_response',
    amountCents: payment.amountCapturedCents,
    reason: 'fraudulent',
    // The simulated processor withdraws the amount, and its dispute fee (the pricing's), as it opens the dispute.
    withdrawal: { amountCents: payment.amountCapturedCents },
    ...(payment.chargeId ? { chargeId: payment.chargeId } : {}),
  }
  const [inserted] = await tx`
    insert into simulated_processor.disputes (reference, payment_reference, state) values (${dispute.reference},
      ${payment.reference}, ${tx.json(dispute as never)})
    on conflict do nothing returning reference`
  if (!inserted) throw new SimulatedControlError(`payment ${payment.reference} is disputed already`)
  return tell(tx, 'dispute.created', [dispute])
}

/** A refund received to decide later is decided: succeeded, or failed (refused), kept as its state and told. */
async function decideRefund(tx: Transaction, idempotencyKey: string, performed: boolean): Promise<ProcessorEvent> {
  const row = theRow(
    await tx<RefundRow[]>`
      select idempotency_key, created_at, parameters, outcome, state from simulated_processor.operations
      where idempotency_key = ${idempotencyKey}`,
    `refund operation ${idempotencyKey}`,
  )
  const decided: RefundState = performed
    ? { ...refundState(row), status: 'succeeded' }
    : { ...refundState(row), status: 'failed', failureReason: 'refused' }
  await tx`update simulated_processor.operations set state = ${tx.json(decided as never)}
    where idempotency_key = ${idempotencyKey}`
  return tell(tx, performed ? 'refund.succeeded' : 'refund.failed', [decided])
}

/** An event of the processor, written with the change it tells. */
export async function tell(tx: Transaction, type: string, changes: ProcessorChange[]): Promise<ProcessorEvent> {
  const id = `sim_evt_${randomBytes(12).toString('hex')}`
  const row = theRow(
    await tx<{ created_at: Date }[]>`
      insert into simulated_processor.events (id, type, changes) values (${id}, ${type}, ${tx.json(changes as never)})
      returning created_at`,
    `event ${id}`,
  )
  return { id, type, createdAt: row.created_at, changes }
}

async function paymentRow(db: Sql | Transaction, reference: string, lock: boolean): Promise<PaymentRow | undefined> {
  const [row] = await db<PaymentRow[]>`
    select idempotency_key, created_at, kind, parameters, outcome, state from simulated_processor.operations
    where kind in ('charge', 'authorization') and outcome->>'processorReference' = ${reference}
      ${lock ? db`for update` : db``}`
  return row
}

/** A payment now: its state once it moved, else what its first answer said. */
export function paymentState(row: PaymentRow): PaymentState {
  if (row.state) return { ...row.state, createdAt: row.created_at }
  const { outcome } = row
  const base = {
    object: 'payment' as const,
    reference: outcome.processorReference ?? '',
    createdAt: row.created_at,
    amountCents: row.parameters.amount_cents,
    amountCapturedCents: 0,
  }
  const made = row.parameters.charge_id ? { ...base, chargeId: row.parameters.charge_id } : base
  switch (outcome.status) {
    case 'succeeded':
      return row.kind === 'authorization'
        ? { ...made, status: 'requires_capture' }
        : { ...made, status: 'succeeded', amountCapturedCents: made.amountCents }
    case 'failed':
      return { ...made, status: 'failed', failureCode: outcome.failureCode, failureMessage: outcome.failureMessage }
    default:
      return { ...made, status: outcome.status }
  }
}

export function refundState(row: RefundRow): RefundState {
  if (row.state) return { ...row.state, createdAt: row.created_at }
  const refund: RefundState = {
    object: 'refund',
    reference: row.outcome.processorReference,
    paymentReference: row.parameters.charge_reference,
    createdAt: row.created_at,
    // Received to decide later (pm_card_decidedLater): pending until decided.
    status: row.outcome.decidedLater ? 'pending' : 'succeeded',
    amountCents: row.parameters.amount_cents,
  }
  if (row.parameters.origin !== 'dashboard') refund.operationId = row.idempotency_key
  else if (row.charge_id) refund.chargeId = row.charge_id
  return refund
}

/** After a capture or a void, the payment's state says so. */
export async function recordSettlement(
  tx: Transaction,
  reference: string,
  settled: { status: 'succeeded'; amountCapturedCents: number } | { status: 'canceled' },
): Promise<PaymentState | undefined> {
  const row = await paymentRow(tx, reference, true)
  if (!row) return undefined
  const moved: PaymentState = {
    ...paymentState(row),
    ...settled,
    ...(settled.status === 'canceled' ? { cancellation: 'canceled' as const } : {}),
  }
  await tx`update simulated_processor.operations set state = ${tx.json(moved as never)} where idempotency_key =
    ${row.idempotency_key}`
  return moved
}
