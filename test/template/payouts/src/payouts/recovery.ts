// Settles an abandoned POST /v1/payouts: its pending payout is recorded if the processor paid (or failed) it under
// the claim's operation id, and canceled, its amount given back, if the processor never saw it.
import type { Sql } from '../db/connect.js'
import type { Recovery } from '../idempotency/recovery.js'
import { lookupOutcome, type PaymentProcessor, type PayoutOutcome } from '../processor/processor.js'
import { payoutCall, recordPayout } from './payouts.js'
import { cancelPendingPayout, findPayoutByOperation } from './repository.js'

export function payoutRecovery(processor: PaymentProcessor, sql: Sql): Recovery<PayoutOutcome> {
  return {
    endpoint: 'POST /v1/payouts',
    async lookup(claim) {
      // The reservation comes before the call: without it, nothing under this operation went out.
      const pending = await findPayoutByOperation(sql, claim.accountId, claim.operationId)
      if (pending?.status !== 'pending') return undefined
      return lookupOutcome(processor, {
        kind: 'payout',
        request: payoutCall(pending, claim.operationId),
        notBefore: claim.createdAt,
      })
    },
    async record(tx, claim, outcome) {
      const payout = await findPayoutByOperation(tx, claim.accountId, claim.operationId)
      if (!payout)
        throw new Error(`the processor paid out operation ${claim.operationId}, but no pending payout records it`)
      return recordPayout(tx, payout, outcome)
    },
    release: (tx, claim) => cancelPendingPayout(tx, claim.accountId, claim.operationId),
  }
}
