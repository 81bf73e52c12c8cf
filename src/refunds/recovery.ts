// Settles an abandoned refund (POST /v1/charges/:id/refunds names it): its pending refund becomes succeeded if the
// processor refunded under the claim's operation id, and is given back if it never saw it.
import type { Sql } from '../db/connect.js'
import { lookupOutcome, type PaymentProcessor, type RefundOutcome } from '../processor/processor.js'
import type { Recovery } from '../idempotency/recovery.js'
import { deletePendingRefund, findRefundByOperation } from './repository.js'
import { recordRefund, refundCall } from './refunds.js'

export function refundRecovery(processor: PaymentProcessor, sql: Sql): Recovery<RefundOutcome> {
  return {
    name: 'refund',
    async lookup(claim) {
      // The pending refund is reserved before the call: without it, nothing under this operation went out.
      const [pending] = await sql<
        {
          account_id: string
          amount_cents: number
          refund_application_fee: boolean
          reference: string
          processor_account: string | null
        }[]
      >`
        select r.account_id, r.amount_cents, r.refund_application_fee,
          coalesce(c.processor_reference, c.id) as reference, c.processor_account
        from refunds r join charges c on c.id = r.charge_id and c.account_id = r.account_id
        where r.account_id = ${claim.accountId} and r.operation_id = ${claim.operationId} and r.status = 'pending'`
      if (!pending) return undefined
      const payment = { reference: pending.reference, processorAccount: pending.processor_account }
      return lookupOutcome(processor, {
        kind: 'refund',
        request: refundCall(pending, payment, claim.operationId),
        notBefore: claim.createdAt,
      })
    },
    async record(tx, claim, outcome) {
      const refund = await findRefundByOperation(tx, claim.operationId)
      // The processor refunded, so the reservation was made first; without it the books and the processor disagree.
      if (!refund)
        throw new Error(`the processor refunded operation ${claim.operationId}, but no pending refund records it`)
      return recordRefund(tx, refund, outcome)
    },
    release: (tx, claim) => deletePendingRefund(tx, claim.operationId),
  }
}
