// What the processor charges, and when money it collects becomes available: the fee schedule a posting of a
// payment or a dispute reads when the processor did not say (src/ledger/postings.ts). The simulated processor has no
// fees of its own: these are its fees. With Stripe, charges, captures and disputes post Stripe's own fee; a payment
// decided later posts this schedule: set it to the account's pricing (docs/ledger.md, "Fees and availability").
import type { FeeDetail } from '../schemas/balance.js'
import { type Currency, ZERO_DECIMAL_CURRENCIES } from '../schemas/common.js'

export interface Pricing {
  /** Of each payment, in hundredths of a percent: 290 is 2.9%. */
  percentBasisPoints: number
  /** And a fixed part per payment, in cents: 30 is $0.30 or €0.30 (fixedFee says what it is in other currencies). */
  fixedCents: number
  /** Per dispute, withdrawn with its amount (and not given back when it is won, as Stripe does), in cents. */
  disputeFeeCents: number
  /** Where a currency's fixed parts differ, each in the currency's own minor unit (yen for jpy). */
  byCurrency?: { fixed?: CurrencyAmounts; dispute?: CurrencyAmounts }
  /** How long after a payment its net becomes available to pay out. */
  availableAfterDays: number
}

export type CurrencyAmounts = Partial<Record<Currency, number>>

/**
 * A fixed amount of the pricing in a currency's minor unit: the currency's own, or the amount in cents made the same
 * number of whole units in a currency without cents (30 cents: ¥0, rounded half up).
 */
function inCurrency(cents: number, own: number | undefined, currency: Currency): number {
  if (own !== undefined) return own
  return ZERO_DECIMAL_CURRENCIES.includes(currency) ? Math.round(cents / 100) : cents
}

export const fixedFee = (pricing: Pricing, currency: Currency) =>
  inCurrency(pricing.fixedCents, pricing.byCurrency?.fixed?.[currency], currency)

export const disputeFeeAmount = (pricing: Pricing, currency: Currency) =>
  inCurrency(pricing.disputeFeeCents, pricing.byCurrency?.dispute?.[currency], currency)

/** The processor's fee on a payment: its percentage, rounded half up, and its fixed part in the payment's currency. */
export function paymentFee(pricing: Pricing, amountCents: number, currency: string): FeeDetail[] {
  const unit = currency as Currency
  const fixed = fixedFee(pricing, unit)
  const cents = Math.round((amountCents * pricing.percentBasisPoints) / 10_000) + fixed
  const percent = `${pricing.percentBasisPoints / 100}%`
  return cents === 0
    ? []
    : [{ type: 'processor_fee', amount_cents: cents, currency: unit, description: `${percent} + ${fixed}` }]
}

/** What the processor kept: the sum of a fee's parts. */
export function feeTotal(fees: FeeDetail[]): number {
  return fees.reduce((sum, each) => sum + each.amount_cents, 0)
}

export function disputeFee(pricing: Pricing, currency: string): FeeDetail[] {
  const amount = disputeFeeAmount(pricing, currency as Currency)
  return amount === 0
    ? []
    : [{ type: 'dispute_fee', amount_cents: amount, currency: currency as Currency, description: 'Dispute fee' }]
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
  FEE_FIXED_BY_CURRENCY: string
  DISPUTE_FEE_BY_CURRENCY: string
  FUNDS_AVAILABLE_AFTER_DAYS: number
}): ChargeSettings {
  return {
    authorizationExpiresDays: config.AUTHORIZATION_EXPIRES_DAYS,
    pricing: {
      percentBasisPoints: config.FEE_PERCENT_BASIS_POINTS,
      fixedCents: config.FEE_FIXED_CENTS,
      disputeFeeCents: config.DISPUTE_FEE_CENTS,
      byCurrency: {
        fixed: currencyAmounts(config.FEE_FIXED_BY_CURRENCY),
        dispute: currencyAmounts(config.DISPUTE_FEE_BY_CURRENCY),
      },
      availableAfterDays: config.FUNDS_AVAILABLE_AFTER_DAYS,
    },
  }
}

/** "jpy=0,eur=25" as amounts by currency (the configuration's pattern has checked its form). */
function currencyAmounts(text: string): CurrencyAmounts {
  return Object.fromEntries(
    text
      .split(',')
      .filter(Boolean)
      .map((entry) => {
        const [currency, amount] = entry.split('=')
        return [currency, Number(amount)]
      }),
  )
}
