// The platform's price of an account's payments (Stripe Connect's application fee: docs/processors.md), per currency,
// set by the operator (npm run account:platform-fee), never with the account's own key. A charge made on the
// account's connected account carries the fee; Stripe takes it from the payment for the platform. The account's
// pricing is read with its API key (api-keys.ts) and kept with each claim, so that a retry or the recovery worker
// sends the processor the very fee the first attempt sent, whatever the pricing says by then.
import type { Sql } from '../db/connect.js'

/** One currency's price: a percentage of the payment and a fixed part, in the currency's minor unit. */
export interface PlatformPrice {
  /** In hundredths of a percent: 100 is 1%. */
  percentBasisPoints: number
  fixedAmount: number
}

/** An account's prices, by currency (lowercase ISO 4217); a currency without one pays no fee. */
export type PlatformPricing = Record<string, PlatformPrice>

/**
 * The platform's fee on a payment of `amount` in `currency`: its percentage, rounded half up, and its fixed part,
 * never more than the payment (Stripe refuses more); undefined when it is nothing, or the currency has no price.
 */
export function applicationFeeOf(
  pricing: PlatformPricing | undefined,
  amount: number,
  currency: string,
): number | undefined {
  const price = pricing?.[currency]
  if (!price) return undefined
  const fee = Math.min(amount, Math.round((amount * price.percentBasisPoints) / 10_000) + price.fixedAmount)
  return fee > 0 ? fee : undefined
}

/** Sets the account's price in a currency (null: removes it). False when there is no such account. */
export async function setPlatformPrice(
  sql: Sql,
  accountId: string,
  currency: string,
  price: PlatformPrice | null,
): Promise<boolean> {
  const [account] = await sql`select 1 from accounts where id = ${accountId}`
  if (!account) return false
  if (price === null) {
    await sql`delete from platform_pricing where account_id = ${accountId} and currency = ${currency}`
    return true
  }
  await sql`
    insert into platform_pricing (account_id, currency, percent_basis_points, fixed_amount)
    values (${accountId}, ${currency}, ${price.percentBasisPoints}, ${price.fixedAmount})
    on conflict (account_id, currency) do update
      set percent_basis_points = excluded.percent_basis_points, fixed_amount = excluded.fixed_amount`
  return true
}
