// Records a charge as the processor reported it, and says what the request that asked for it returns: 201 with
// the charge, or 402 with the decline. The route and the recovery worker both end a charge here, so a settled
// unknown outcome replays the very bytes a live request would have sent.
import type { Transaction } from '../db/connect.js'
import type { RouteResponse } from '../idempotency/response.js'
import type { ChargeOutcome } from '../processor/processor.js'
import { PROBLEM_CONTENT_TYPE, problemBody } from '../problems.js'
import type { CreateChargeBody } from '../schemas/charge.js'
import { insertCharge } from './repository.js'

export async function recordCharge(tx: Transaction, accountId: string, input: CreateChargeBody, outcome: ChargeOutcome): Promise<RouteResponse> {
  const charge = await insertCharge(tx, accountId, input, outcome)
  if (charge.status === 'failed') {
    return {
      status: 402,
      contentType: PROBLEM_CONTENT_TYPE,
      body: problemBody('card-declined', charge.failure_message ?? 'The card was declined.', { decline_code: charge.failure_code, charge: charge.id }),
    }
  }
  return { status: 201, location: `/v1/charges/${charge.id}`, body: charge }
}
