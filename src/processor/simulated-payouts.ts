// The simulated processor's balance and payouts: what Stripe does on its payout schedule, made to happen by a
// control. Its balance transactions come from what it holds (payments captured, refunds and their failures,
// disputes and their reinstatements, failed payouts' money back), each with the fee its pricing says: the
// simulated processor has no fee schedule of its own, it charges what the books' FEE_* settings say. A payout
// carries every balance transaction of its currency not paid out before whose funds are available by the time
// asked, as Stripe's automatic payouts do, and is told at once with what it carries (Stripe lists that once the
// payout's reconciliation completes); then it arrives or fails by its controls.
import { createHash, randomBytes } from 'node:crypto'
import type { Sql, Transaction } from '../db/connect.js'
import { disputeFee, feeTotal, paymentFee, type Pricing } from './pricing.js'
import type { CarriedTransaction, DisputeState, PayoutState, ProcessorEvent } from './later-outcomes.js'
import {
  type PaymentRow,
  paymentState,
  type RefundRow,
  refundState,
  SimulatedControlError,
  tell,
} from './simulated-later-outcomes.js'

export interface SimulatedPayouts {
  /** Pays out the balance of `currency` available by `availableBy`: a payout in transit, told with what it carries. */
  payOut(pricing: Pricing, options: { currency: string; availableBy: Date }): Promise<ProcessorEvent>
  /** The payout arrives at the bank, or the bank refuses it (the money goes back to the processor's balance). */
  settlePayout(reference: string, outcome: 'paid' | 'failed'): Promise<ProcessorEvent>
}

/** A balance transaction of the simulated processor, and when its funds are available. */
interface Held {
  carried: CarriedTransaction
  currency: string
  availableOn: Date
}

export function simulatedPayouts(sql: Sql): SimulatedPayouts {
  return {
    payOut: (pricing, { currency, availableBy }) =>
      sql.begin(async (tx) => {
        // One payout at a time, so that no balance transaction is carried twice.
        await tx`lock table simulated_processor.payouts in exclusive mode`
        const earlier = await tx<{ reference: string }[]>`
          select c->>'reference' as reference
          from simulated_processor.payouts, jsonb_array_elements(state->'carried') c`
        const paid = new Set(earlier.map((row) => row.reference))
        const carried = (await heldBalanceTransactions(tx, pricing))
          .filter((held) => held.currency === currency && held.availableOn <= availableBy)
          .filter((held) => !paid.has(held.carried.reference))
          .map((held) => held.carried)
        const amountCents = carried.reduce((sum, each) => sum + each.netCents, 0)
        if (amountCents <= 0)
          throw new SimulatedControlError(
            `the ${currency} balance available by ${availableBy.toISOString()} is ${amountCents}: nothing to pay out`,
          )
        const payout: PayoutState = {
          object: 'payout',
          reference: `sim_po_${randomBytes(12).toString('hex')}`,
          status: 'in_transit',
          amountCents,
          currency,
          // A day's bank transfer, as Stripe's standard payouts expect.
          arrivalDate: new Date(Date.now() + 86_400_000).toISOString(),
          carried,
        }
        await tx`insert into simulated_processor.payouts (reference, state) values (${payout.reference},
          ${tx.json(payout as never)})`
        return tell(tx, 'payout.created', [payout])
      }),
    settlePayout: (reference, outcome) =>
      sql.begin(async (tx) => {
        const [row] = await tx<{ state: PayoutState }[]>`
          select state from simulated_processor.payouts where reference = ${reference} for update`
        if (!row) throw new SimulatedControlError(`no payout ${reference}`)
        if (row.state.status !== 'in_transit')
          throw new SimulatedControlError(`payout ${reference} is ${row.state.status} already`)
        const settled: PayoutState = {
          ...row.state,
          status: outcome,
          ...(outcome === 'failed' ? { failureCode: 'account_closed' } : {}),
        }
        await tx`update simulated_processor.payouts set state = ${tx.json(settled as never)} where reference =
          ${reference}`
        return tell(tx, outcome === 'paid' ? 'payout.paid' : 'payout.failed', [settled])
      }),
  }
}

/** Every balance transaction the simulated processor holds, from its payments, refunds and disputes. */
async function heldBalanceTransactions(tx: Transaction, pricing: Pricing): Promise<Held[]> {
  const payments = await tx<(PaymentRow & { currency: string })[]>`
    select idempotency_key, created_at, kind, parameters, outcome, state, parameters->>'currency' as currency
    from simulated_processor.operations
    where kind in ('charge', 'authorization') and outcome ? 'processorReference'`
  const refunds = await tx<(RefundRow & { currency: string })[]>`
    select r.idempotency_key, r.created_at, r.parameters, r.outcome, r.state, p.parameters->>'charge_id' as charge_id,
      p.parameters->>'currency' as currency
    from simulated_processor.operations r
    join simulated_processor.operations p on p.kind in ('charge', 'authorization') and
      p.outcome->>'processorReference' = r.parameters->>'charge_reference'
    where r.kind = 'refund' and r.outcome ? 'processorReference'`
  const disputes = await tx<{ state: DisputeState; created_at: Date; currency: string }[]>`
    select d.state, d.created_at, p.parameters->>'currency' as currency from simulated_processor.disputes d
    join simulated_processor.operations p on p.kind in ('charge', 'authorization') and
      p.outcome->>'processorReference' = d.payment_reference`
  const failedPayouts = await tx<{ state: PayoutState; created_at: Date }[]>`
    select state, created_at from simulated_processor.payouts where state->>'status' = 'failed'`
  const held: Held[] = []
  const add = (
    type: CarriedTransaction['type'],
    about: { paymentReference?: string; chargeId?: string | null | undefined; objectReference?: string },
    money: { amountCents: number; feeCents: number; currency: string; availableOn: Date },
  ) => {
    const key = `${type}:${about.objectReference ?? about.paymentReference}`
    held.push({
      carried: {
        reference: `sim_txn_${createHash('sha256').update(key).digest('hex').slice(0, 24)}`,
        type,
        ...(about.paymentReference ? { paymentReference: about.paymentReference } : {}),
        ...(about.chargeId ? { chargeId: about.chargeId } : {}),
        ...(about.objectReference ? { objectReference: about.objectReference } : {}),
        amountCents: money.amountCents,
        feeCents: money.feeCents,
        netCents: money.amountCents - money.feeCents,
      },
      currency: money.currency,
      availableOn: money.availableOn,
    })
  }
  const days = (from: Date, count: number) => new Date(from.getTime() + count * 86_400_000)
  for (const row of payments) {
    const payment = paymentState(row)
    if (payment.status !== 'succeeded' || payment.amountCapturedCents === 0) continue
    const captured = payment.amountCapturedCents
    add(
      'charge',
      { paymentReference: payment.reference, chargeId: payment.chargeId },
      {
        amountCents: captured,
        feeCents: feeTotal(paymentFee(pricing, captured, row.currency)),
        currency: row.currency,
        availableOn: days(row.created_at, pricing.availableAfterDays),
      },
    )
  }
  for (const row of refunds) {
    const refund = refundState(row)
    const about = {
      paymentReference: refund.paymentReference,
      chargeId: row.charge_id,
      objectReference: refund.reference,
    }
    const at = { feeCents: 0, currency: row.currency, availableOn: row.created_at }
    add('refund', about, { ...at, amountCents: -refund.amountCents })
    if (refund.status === 'failed' || refund.status === 'canceled')
      add('refund_failure', about, { ...at, amountCents: refund.amountCents })
  }
  for (const { state: dispute, created_at, currency } of disputes) {
    const about = {
      paymentReference: dispute.paymentReference,
      chargeId: dispute.chargeId,
      objectReference: dispute.reference,
    }
    const at = { currency, availableOn: created_at }
    add('dispute', about, {
      ...at,
      amountCents: -dispute.amountCents,
      feeCents: feeTotal(disputeFee(pricing, currency)),
    })
    if (dispute.status === 'won')
      add('dispute_reversal', about, { ...at, amountCents: dispute.amountCents, feeCents: 0 })
  }
  // The bank refused a payout: its money is back in the balance, to be paid out again.
  for (const { state: payout, created_at } of failedPayouts)
    add(
      'payout_failure',
      { objectReference: payout.reference },
      { amountCents: payout.amountCents, feeCents: 0, currency: payout.currency, availableOn: created_at },
    )
  return held
}
