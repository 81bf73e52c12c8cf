// What the service sends the processor for a charge, a capture and a void, built in one place from what the
// request asked and what was reserved for it: the route sends it, and the recovery worker asks the processor about
// exactly the same request.
import type { CaptureRequest, ChargeRequest, VoidRequest } from '../processor/processor.js'
import { idOfOperation } from '../db/ids.js'
import type { CreateChargeBody } from '../schemas/charge.js'
import type { AuthenticatedAccount } from '../accounts/api-keys.js'
import { applicationFeeOf, type PlatformPricing } from '../accounts/platform-pricing.js'

/** A new charge, made on the account's processor account (the request's, or the one its claim kept for recovery). */
export function chargeCall(
  account: AuthenticatedAccount,
  input: CreateChargeBody,
  idempotencyKey: string,
): ChargeRequest {
  return {
    chargeId: chargeIdOf(idempotencyKey),
    amountCents: input.amount_cents,
    currency: input.currency,
    source: input.source,
    description: input.description ?? null,
    returnUrl: input.return_url ?? null,
    mandate: input.mandate ? { ipAddress: input.mandate.ip_address, userAgent: input.mandate.user_agent } : null,
    accountId: account.id,
    processorAccount: account.processorAccount,
    ...platformFee(account.processorAccount, account.platformPricing, input.amount_cents, input.currency),
    idempotencyKey,
  }
}

/**
 * The platform's fee on a payment made on a connected account (Stripe Connect), by the account's pricing: none on
 * the platform's own account, nor in a currency the pricing has no price for.
 */
function platformFee(
  processorAccount: string | null,
  pricing: PlatformPricing | undefined,
  amountCents: number,
  currency: string,
): { applicationFeeCents?: number } {
  const fee = processorAccount === null ? undefined : applicationFeeOf(pricing, amountCents, currency)
  return fee === undefined ? {} : { applicationFeeCents: fee }
}

/** The charge a create-charge operation records, decided before the processor is called (src/db/ids.ts). */
export function chargeIdOf(operationId: string): string {
  return idOfOperation('ch', operationId)
}

/** What a charge's later calls need of it: they go to the processor account it was made on. */
export type ChargeOf = { account_id: string; processor_reference: string | null; processor_account: string | null }

/**
 * A capture of `amountCents` (what was reserved) of the authorization; the rest of it is released. On a connected
 * account, the platform's fee is set again for what is captured, by the account's pricing now (`pricing`: the
 * recovery worker, which only asks what the capture did, sends none).
 */
export function captureCall(
  charge: ChargeOf & { currency: string },
  amountCents: number,
  idempotencyKey: string,
  pricing?: PlatformPricing,
): CaptureRequest {
  return {
    chargeReference: authorizationOf(charge),
    amountCents,
    ...madeOn(charge),
    ...platformFee(charge.processor_account, pricing, amountCents, charge.currency),
    idempotencyKey,
  }
}

export function voidCall(charge: ChargeOf, idempotencyKey: string): VoidRequest {
  return { chargeReference: authorizationOf(charge), ...madeOn(charge), idempotencyKey }
}

/** Who a call about an existing charge is for, and where: the account, on the processor account of the charge. */
export function madeOn(charge: ChargeOf): { accountId: string; processorAccount: string | null } {
  return { accountId: charge.account_id, processorAccount: charge.processor_account }
}

/** The processor's reference of an authorization: every charge that reaches requires_capture has one. */
function authorizationOf(charge: ChargeOf): string {
  if (charge.processor_reference === null)
    throw new Error('an authorization without a processor reference: the processor never made it')
  return charge.processor_reference
}
