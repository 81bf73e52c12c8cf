// Settles an abandoned POST /v1/charges/:id/refunds: its pending refund becomes succeeded if the processor
// refunded under the claim's operation id, and is given back if it never saw it.
import { lookupOutcome, type PaymentProcessor, type RefundOutcome } from '../processor/processor.js'
import type { Recovery } from '../idempotency/recovery.js'
import { deletePendingRefund, findRefundByOperation } from './repository.js'
import { recordRefund } from './refunds.js'

export function refundRecovery(processor: PaymentProcessor): Recovery<RefundOutcome> {
  return {
    endpoint: 'POST /v1/charges/:id/refunds',
    lookup: (claim) => lookupOutcome(processor, claim.operationId, 'refund'),
    async record(tx, claim, outcome) {
      const refund = await findRefundByOperation(tx, claim.operationId)
      // The processor refunded, so the reservation was made first; without it the books and the processor disagree.
      if (!refund) throw new Error(`the processor refunded operation ${claim.operationId}, but no pending refund records it`)
      return recordRefund(tx, refund, outcome.processorReference)
    },
    release: (tx, claim) => deletePendingRefund(tx, claim.operationId),
  }
}
