// What the processor charges, and when money it collects becomes available: the fee schedule a posting of a
// payment or a dispute reads when the processor did not say (src/ledger/postings.ts). The simulated processor has no
// fees of its own: these are its fees. With Stripe, charges, captures and disputes post Stripe's own fee; a payment
// decided later posts this schedule: set it to the account's pricing (docs/ledger.md, "Fees and availability").
import type { FeeDetail } from '../schemas/balance.js'

export interface Pricing {
  /** Of each payment, in hundredths of a percent: 290 is 2.9%. */
  percentBasisPoints: number
  /** And a fixed part per payment, in the payment's minor unit. */
  fixedCents: number
  /** Per dispute, withdrawn with its amount (and not given back when it is won, as Stripe does). */
  disputeFeeCents: number
  /** How long after a payment its net becomes available to pay out. */
  availableAfterDays: number
}

/** The processor's fee on a payment: its percentage, rounded half up, and its fixed part. */
export function paymentFee(pricing: Pricing, amountCents: number, currency: string): FeeDetail[] {
  const cents = Math.round((amountCents * pricing.percentBasisPoints) / 10_000) + pricing.fixedCents
  const percent = `${pricing.percentBasisPoints / 100}%`
  const unit = currency as FeeDetail['currency']
  return cents === 0
    ? []
    : [
        {
          type: 'processor_fee',
          amount_cents: cents,
          currency: unit,
          description: `${percent} + ${pricing.fixedCents}`,
        },
      ]
}

/** What the processor kept: the sum of a fee's parts. */
export function feeTotal(fees: FeeDetail[]): number {
  return fees.reduce((sum, each) => sum + each.amount_cents, 0)
}

export function disputeFee(pricing: Pricing, currency: string): FeeDetail[] {
  return pricing.disputeFeeCents === 0
    ? []
    : [
        {
          type: 'dispute_fee',
          amount_cents: pricing.disputeFeeCents,
          currency: currency as FeeDetail['currency'],
          description: 'Dispute fee',
        },
      ]
}

/** What moving a charge's money needs to know: how long an authorization holds, and the processor's pricing. */
export interface ChargeSettings {
  authorizationExpiresDays: number
  pricing: Pricing
}

export function chargeSettingsOf(config: {
  AUTHORIZATION_EXPIRES_DAYS: number
  FEE_PERCENT_BASIS_POINTS: number
  FEE_FIXED_CENTS: number
  DISPUTE_FEE_CENTS: number
  FUNDS_AVAILABLE_AFTER_DAYS: number
}): ChargeSettings {
  return {
    authorizationExpiresDays: config.AUTHORIZATION_EXPIRES_DAYS,
    pricing: {
      percentBasisPoints: config.FEE_PERCENT_BASIS_POINTS,
      fixedCents: config.FEE_FIXED_CENTS,
      disputeFeeCents: config.DISPUTE_FEE_CENTS,
      availableAfterDays: config.FUNDS_AVAILABLE_AFTER_DAYS,
    },
  }
}
