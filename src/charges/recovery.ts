// Settles abandoned charges, captures and voids: the processor says what it did under the claim's operation id
// (a charge or authorization, with its outcome; a capture; a void), and it is recorded as the live request would
// have recorded it, or, when the processor never saw it, the reservation is given back.
import type { AuthenticatedAccount } from '../accounts/api-keys.js'
import type { Sql } from '../db/connect.js'
import {
  type ChargeOutcome,
  lookupOutcome,
  type PaymentProcessor,
  type SettlementOutcome,
} from '../processor/processor.js'
import type { ClaimedOperation, Recovery } from '../idempotency/recovery.js'
import type { ChargeSettings, Pricing } from '../processor/pricing.js'
import type { CreateChargeBody } from '../schemas/charge.js'
import { captureCall, chargeCall, chargeIdOf, voidCall } from './calls.js'
import { authorizationExpiry, recordCharge } from './record-charge.js'
import { type ChargeRow, clearPendingOperation } from './repository.js'
import { pendingCaptureOf, recordCapture, recordVoid, type Settlement } from './settle.js'

export function chargeRecovery(processor: PaymentProcessor, settings: ChargeSettings): Recovery<ChargeOutcome> {
  const bodyOf = (claim: { request: { body: unknown } }) => claim.request.body as CreateChargeBody
  // The account as the request had it: its charge was sent to the processor account the claim kept, with the fee
  // of the platform's pricing the claim kept.
  const accountOf = (claim: ClaimedOperation): AuthenticatedAccount => {
    const { processorAccount, platformPricing } = claim.request
    return { id: claim.accountId, processorAccount, ...(platformPricing ? { platformPricing } : {}) }
  }
  return {
    name: 'charge',
    lookup: (claim) =>
      lookupOutcome(processor, {
        kind: bodyOf(claim).capture === false ? 'authorization' : 'charge',
        request: chargeCall(accountOf(claim), bodyOf(claim), claim.operationId),
        notBefore: claim.createdAt,
      }),
    record(tx, claim, outcome) {
      const body = bodyOf(claim)
      const expiresAt = authorizationExpiry(body, settings.authorizationExpiresDays)
      const chargeId = chargeIdOf(claim.operationId)
      return recordCharge(tx, chargeId, accountOf(claim), body, outcome, settings.pricing, expiresAt)
    },
  }
}

export function settlementRecovery(
  processor: PaymentProcessor,
  sql: Sql,
  kind: Settlement,
  pricing: Pricing,
): Recovery<SettlementOutcome> {
  const chargeNamedIn = (claim: { request: { params: unknown } }) => (claim.request.params as { id: string }).id
  return {
    name: kind,
    async lookup(claim) {
      // The reservation is made before the call: without it pending, nothing under this operation went out.
      const [charge] = await sql<ChargeRow[]>`
        select * from charges where id = ${chargeNamedIn(claim)} and account_id = ${claim.accountId} and
          pending_operation_id = ${claim.operationId}`
      if (!charge) return undefined
      return kind === 'capture'
        ? lookupOutcome(processor, {
            kind,
            request: captureCall(charge, pendingCaptureOf(charge), claim.operationId),
            notBefore: claim.createdAt,
          })
        : lookupOutcome(processor, { kind, request: voidCall(charge, claim.operationId), notBefore: claim.createdAt })
    },
    async record(tx, claim, outcome) {
      const [charge] = await tx<ChargeRow[]>`
        select * from charges where id = ${chargeNamedIn(claim)} and account_id = ${claim.accountId} and
          pending_operation_id = ${claim.operationId} for update`
      // The processor acted, so the reservation was made first; without it the books and the processor disagree.
      if (!charge)
        throw new Error(`the processor performed ${kind} ${claim.operationId}, but the charge does not have it pending`)
      return kind === 'capture'
        ? recordCapture(tx, pricing, charge, pendingCaptureOf(charge), outcome)
        : recordVoid(tx, charge, 'voided', outcome)
    },
    release: (tx, claim) =>
      clearPendingOperation(tx, { accountId: claim.accountId, chargeId: chargeNamedIn(claim) }, claim.operationId),
  }
}
