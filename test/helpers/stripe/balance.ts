// The Stripe balance as docs.stripe.com/api/balance_transactions and docs.stripe.com/payouts/reconciliation describe
// it: a balance transaction for each movement of money (a captured payment, `charge`; a refund and a refund's
// failure; a dispute's withdrawal and reinstatement, `adjustment` with reporting_category `dispute` and
// `dispute_reversal`; a failed payout's money back, `payout_failure`; the platform's application fees and their
// refunds, `application_fee` and `application_fee_refund`: application-fees.ts), with Stripe's fees (US cards:
// 2.9% + 30 cents; a dispute: 15.00, kept when it is won), available two days after a payment. Automatic payouts,
// made on cue (payOut: what Stripe's schedule does), carry every available balance transaction not paid out before;
// `GET /v1/balance_transactions?payout=` lists them (with `expand[]=data.source`), once the payout's
// reconciliation completes (`payout.reconciliation_completed`), as Stripe's docs say to wait for.
import type Stripe from 'stripe'
import { noSuch } from './errors.js'
import { chargeOf } from './events.js'
import { collectedFee, PLATFORM_APPLICATION } from './application-fees.js'
import { arrayParam, type Form, stringParam } from './form.js'
import { stripeId, unixNow } from './ids.js'
import { payoutOf } from './payouts.js'
import type { StripeLedger } from './ledger.js'
import { listOf, type Answer } from './lists.js'

const DAY = 86_400
/**
 * Stripe's standard US card pricing (stripe.com/pricing): 2.9% + 30 cents a payment, 15.00 a dispute; a test may
 * give an account its own.
 */
export const STANDARD_CARD_PRICING = { percent: 0.029, fixed: 30, dispute: 1500 }

/** What Stripe holds of each balance transaction: the transaction, and the payout that carried it. */
export class StripeBalance {
  private readonly transactions = new Map<string, Stripe.BalanceTransaction>()
  /** Balance transaction id → the automatic payout that carried it. */
  private readonly paidOut = new Map<string, string>()

  constructor(
    private readonly ledger: StripeLedger,
    private readonly pricing = STANDARD_CARD_PRICING,
  ) {}

  /** Every balance transaction, made once per movement, oldest first. */
  all(): Stripe.BalanceTransaction[] {
    const ledger = this.ledger
    for (const intent of ledger.paymentIntents.values()) this.ofPayment(intent)
    for (const refund of ledger.refunds.values()) {
      if (refund.status === 'canceled') continue
      const at = { source: refund.id, currency: refund.currency, fee_details: [], available_on: refund.created }
      this.ofRefund(refund)
      if (refund.status === 'failed')
        this.make(`refund_failure:${refund.id}`, {
          ...at,
          type: 'refund_failure',
          reporting_category: 'refund_failure',
          amount: refund.amount,
        })
    }
    for (const payout of ledger.payouts.values())
      if (payout.automatic && (payout.status === 'failed' || payout.status === 'canceled'))
        this.make(`payout_failure:${payout.id}`, {
          type: 'payout_failure',
          reporting_category: 'payout_reversal',
          source: payout.id,
          amount: payout.amount,
          currency: payout.currency,
          fee_details: [],
          available_on: unixNow(),
        })
    for (const fee of ledger.applicationFees.values())
      for (const feeRefund of fee.refunds.data) this.ofFeeRefund(feeRefund)
    return [...this.transactions.values()]
  }

  /**
   * A refund's balance transaction: its amount out; on a connected account, the application fee it gave back
   * (application-fees.ts) as a negative fee part, so that the fee comes back with it.
   */
  ofRefund(refund: Stripe.Refund): Stripe.BalanceTransaction {
    const feeBack = this.ledger.feeRefundedBy.get(refund.id) ?? 0
    return this.make(`refund:${refund.id}`, {
      type: 'refund',
      reporting_category: 'refund',
      source: refund.id,
      amount: -refund.amount,
      currency: refund.currency,
      fee_details: feeBack === 0 ? [] : [applicationFeePart(-feeBack, refund.currency)],
      available_on: refund.created,
    })
  }

  /** The platform's: an application fee collected, available when the payment that paid it is. */
  ofApplicationFee(fee: Stripe.ApplicationFee, paidAt: number): Stripe.BalanceTransaction {
    return this.make(`application_fee:${fee.id}`, {
      type: 'application_fee',
      reporting_category: 'platform_earning',
      source: fee.id,
      amount: fee.amount,
      currency: fee.currency,
      fee_details: [],
      available_on: paidAt + 2 * DAY,
    })
  }

  /** The platform's: an application fee given back, out of its balance at once. */
  ofFeeRefund(feeRefund: Stripe.FeeRefund): Stripe.BalanceTransaction {
    return this.make(`application_fee_refund:${feeRefund.id}`, {
      type: 'application_fee_refund',
      reporting_category: 'platform_earning_refund',
      source: feeRefund.id,
      amount: -feeRefund.amount,
      currency: feeRefund.currency,
      fee_details: [],
      available_on: feeRefund.created,
    })
  }

  /** A captured payment's balance transaction (its charge's `balance_transaction`); none before it is captured. */
  ofPayment(intent: Stripe.PaymentIntent): Stripe.BalanceTransaction | undefined {
    if (intent.amount_received === 0 || !intent.latest_charge) return undefined
    const fee = Math.round(intent.amount_received * this.pricing.percent) + this.pricing.fixed
    return this.make(`charge:${intent.id}`, {
      type: 'charge',
      reporting_category: 'charge',
      source: intent.latest_charge as string,
      amount: intent.amount_received,
      currency: intent.currency,
      fee_details: [
        {
          amount: fee,
          application: null,
          currency: intent.currency,
          description: 'Stripe processing fees',
          type: 'stripe_fee',
        },
        ...(collectedFee(intent) === 0 ? [] : [applicationFeePart(collectedFee(intent), intent.currency)]),
      ],
      available_on: intent.created + 2 * DAY,
    })
  }

  /** A dispute's withdrawal: its amount and the dispute fee, out of the balance at once. */
  withdraw(dispute: Stripe.Dispute): Stripe.BalanceTransaction {
    return this.make(`dispute:${dispute.id}`, {
      source: dispute.id,
      currency: dispute.currency,
      available_on: unixNow(),
      type: 'adjustment',
      reporting_category: 'dispute',
      amount: -dispute.amount,
      fee_details: [
        {
          amount: this.pricing.dispute,
          application: null,
          currency: dispute.currency,
          description: 'Dispute fee',
          type: 'stripe_fee',
        },
      ],
    })
  }

  /** A won dispute's reinstatement: its amount back, the fee kept (stripe.com/pricing). */
  reinstate(dispute: Stripe.Dispute): Stripe.BalanceTransaction {
    return this.make(`dispute_reversal:${dispute.id}`, {
      source: dispute.id,
      currency: dispute.currency,
      available_on: unixNow(),
      type: 'adjustment',
      reporting_category: 'dispute_reversal',
      amount: dispute.amount,
      fee_details: [],
    })
  }

  /**
   * An automatic payout of every balance transaction of `currency` available by `availableBy` (unix seconds) and not
   * paid out before: in transit, its reconciliation in progress (payout.created), then completed
   * (payout.reconciliation_completed). Undefined when there is nothing to pay out.
   */
  payOut(currency: string, availableBy: number): Stripe.Payout | undefined {
    const carried = this.all().filter(
      (txn) =>
        txn.currency === currency &&
        !this.paidOut.has(txn.id) &&
        txn.type !== 'payout' &&
        (txn.available_on <= availableBy || txn.net < 0),
    )
    const amount = carried.reduce((sum, txn) => sum + txn.net, 0)
    if (amount <= 0) return undefined
    const payout = payoutOf(amount, currency, {
      automatic: true,
      balance_transaction: null,
      description: 'STRIPE PAYOUT',
      reconciliation_status: 'in_progress',
      status: 'in_transit',
    })
    const own = this.make(`payout:${payout.id}`, {
      type: 'payout',
      reporting_category: 'payout',
      source: payout.id,
      amount: -amount,
      currency,
      fee_details: [],
      available_on: payout.created,
    })
    payout.balance_transaction = own.id
    for (const txn of [...carried, own]) this.paidOut.set(txn.id, payout.id)
    this.ledger.payouts.set(payout.id, payout)
    // Not one of the movements the service's keys cause (ledger.movements): Stripe makes it on its own schedule.
    this.ledger.events.emit('payout.created', { ...payout }, undefined)
    payout.reconciliation_status = 'completed'
    this.ledger.events.emit('payout.reconciliation_completed', { ...payout }, undefined)
    return payout
  }

  /** The payout arrives, or the bank refuses it (its money comes back as a payout_failure). */
  settle(id: string, outcome: 'paid' | 'failed'): Stripe.Payout {
    const payout = this.ledger.payouts.get(id)
    if (!payout) throw noSuch('payout', id, 'payout')
    payout.status = outcome
    if (outcome === 'failed') {
      payout.failure_code = 'account_closed'
      payout.failure_message = 'The bank account has been closed.'
      payout.failure_balance_transaction = this.all().find(
        (txn) => txn.type === 'payout_failure' && txn.source === id,
      )!.id
    }
    this.ledger.events.emit(`payout.${outcome}`, { ...payout }, undefined)
    return payout
  }

  /**
   * GET /v1/balance (docs.stripe.com/api/balance/balance_object): per currency, the net of the balance transactions
   * available by now (a payout's own, negative, at once), and of those still pending; card payments' source type.
   */
  retrieve(): Answer<Stripe.Balance> {
    const now = unixNow()
    const sums = { available: new Map<string, number>(), pending: new Map<string, number>() }
    for (const txn of this.all()) {
      const side = txn.available_on <= now ? sums.available : sums.pending
      side.set(txn.currency, (side.get(txn.currency) ?? 0) + txn.net)
      const other = side === sums.available ? sums.pending : sums.available
      if (!other.has(txn.currency)) other.set(txn.currency, 0)
    }
    const funds = (side: Map<string, number>) =>
      [...side].map(([currency, amount]) => ({ amount, currency, source_types: { card: amount } }))
    const balance = {
      object: 'balance',
      available: funds(sums.available),
      pending: funds(sums.pending),
      livemode: false,
    }
    return { status: 200, body: balance as Stripe.Balance }
  }

  /** GET /v1/balance_transactions: newest first; by payout (an automatic one's), type or source; `source` expanded. */
  list(form: Form): Answer<Stripe.ApiList<Stripe.BalanceTransaction>> {
    const payout = stringParam(form, 'payout')
    if (payout !== undefined && !this.ledger.payouts.has(payout)) throw noSuch('payout', payout, 'payout')
    const type = stringParam(form, 'type')
    const source = stringParam(form, 'source')
    const found = this.all().filter(
      (txn) =>
        (payout === undefined || this.paidOut.get(txn.id) === payout) &&
        (type === undefined || txn.type === type) &&
        (source === undefined || txn.source === source),
    )
    const page = listOf(found, form, '/v1/balance_transactions')
    if (!(arrayParam(form, 'expand') ?? []).includes('data.source')) return { status: 200, body: page }
    return { status: 200, body: { ...page, data: page.data.map((txn) => ({ ...txn, source: this.sourceOf(txn) })) } }
  }

  /** GET /v1/balance_transactions/:id. */
  retrieveOne(id: string): Answer<Stripe.BalanceTransaction> {
    const txn = this.all().find((each) => each.id === id)
    if (!txn) throw noSuch('balance_transaction', id, 'id')
    return { status: 200, body: txn }
  }

  private sourceOf(txn: Stripe.BalanceTransaction): Stripe.BalanceTransaction['source'] {
    const id = txn.source as string
    const intent = [...this.ledger.paymentIntents.values()].find((each) => each.latest_charge === id)
    if (intent) return chargeOf(this.ledger, intent)
    const { refunds, disputes, payouts, applicationFees } = this.ledger
    return (refunds.get(id) ?? disputes.get(id) ?? payouts.get(id) ?? applicationFees.get(id) ?? id) as never
  }

  private make(
    key: string,
    fields: Pick<Stripe.BalanceTransaction, 'type' | 'reporting_category' | 'amount' | 'currency' | 'available_on'> & {
      source: string
      fee_details: Stripe.BalanceTransaction.FeeDetail[]
    },
  ): Stripe.BalanceTransaction {
    const known = this.transactions.get(key)
    if (known) return known
    const fee = fields.fee_details.reduce((sum, part) => sum + part.amount, 0)
    const txn: Stripe.BalanceTransaction = {
      id: stripeId('txn'),
      object: 'balance_transaction',
      balance_type: 'payments',
      created: unixNow(),
      description: null,
      exchange_rate: null,
      fee,
      net: fields.amount - fee,
      status: fields.available_on <= unixNow() ? 'available' : 'pending',
      ...fields,
    }
    this.transactions.set(key, txn)
    return txn
  }
}

/** The platform's fee as a part of a connected account's balance transaction: positive taken, negative given back. */
function applicationFeePart(amount: number, currency: string): Stripe.BalanceTransaction.FeeDetail {
  return {
    amount,
    application: PLATFORM_APPLICATION,
    currency,
    description: 'Application fee',
    type: 'application_fee',
  }
}
