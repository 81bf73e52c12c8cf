// Settles an abandoned POST /v1/charges: the processor says whether it charged (or declined) under the claim's
// operation id, and the charge is recorded as the live request would have recorded it.
import { type ChargeOutcome, lookupOutcome, type PaymentProcessor } from '../processor/processor.js'
import type { Recovery } from '../recovery/recovery.js'
import type { CreateChargeBody } from '../schemas/charge.js'
import { sendAll } from '../db/pipeline.js'
import { recordCharge } from './record-charge.js'

export function chargeRecovery(processor: PaymentProcessor): Recovery<ChargeOutcome> {
  return {
    endpoint: 'POST /v1/charges',
    lookup: (claim) => lookupOutcome(processor, claim.operationId, 'charge'),
    async record(tx, claim, outcome) {
      const { writes, response } = recordCharge(tx, claim.accountId, claim.request.body as CreateChargeBody, outcome)
      sendAll(tx, writes)
      return response
    },
  }
}
