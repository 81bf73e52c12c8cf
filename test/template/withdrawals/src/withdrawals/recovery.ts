// Settles an abandoned withdrawal (POST /v1/withdrawals names it): its pending withdrawal is recorded if the
// processor paid (or failed) it under the claim's operation id, and canceled, its amount given back, if the
// processor never saw it.
import type { Sql } from '../db/connect.js'
import type { Recovery } from '../idempotency/recovery.js'
import { lookupOutcome, type PaymentProcessor, type WithdrawalOutcome } from '../processor/processor.js'
import { cancelWithdrawal, withdrawalCall, recordWithdrawal } from './withdrawals.js'
import { findWithdrawalByOperation } from './repository.js'

export function withdrawalRecovery(processor: PaymentProcessor, sql: Sql): Recovery<WithdrawalOutcome> {
  return {
    name: 'withdrawal',
    async lookup(claim) {
      // The reservation comes before the call: without it, nothing under this operation went out.
      const pending = await findWithdrawalByOperation(sql, claim.accountId, claim.operationId)
      if (pending?.status !== 'pending') return undefined
      return lookupOutcome(processor, {
        kind: 'withdrawal',
        request: withdrawalCall(pending, claim.request.processorAccount, claim.operationId),
        notBefore: claim.createdAt,
      })
    },
    async record(tx, claim, outcome) {
      const withdrawal = await findWithdrawalByOperation(tx, claim.accountId, claim.operationId)
      if (!withdrawal)
        throw new Error(`the processor paid out operation ${claim.operationId}, but no pending withdrawal records it`)
      return recordWithdrawal(tx, withdrawal, outcome)
    },
    release: (tx, claim) => cancelWithdrawal(tx, claim.accountId, claim.operationId),
  }
}
