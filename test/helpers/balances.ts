// An account's balance in the service held against its connected account's balance at Stripe (Stripe Connect), to
// the cent: available and pending, currency by currency, leaving out what is zero on either side.
import type Stripe from 'stripe'
import { expect } from 'vitest'
import type { TestAccount } from './app.js'

/** Per currency, what is non-zero: the service's funds (`amount_cents`) or Stripe's (`amount`). */
const nonZero = (funds: { amount?: number; amount_cents?: number; currency: string }[]) =>
  Object.fromEntries(
    funds
      .map((each) => [each.currency, each.amount ?? each.amount_cents ?? 0] as const)
      .filter(([, amount]) => amount !== 0),
  )

export async function expectBalanceOfStripe(account: TestAccount, atStripe: Stripe): Promise<void> {
  const mine = (await account.get('/v1/balance')).json()
  const theirs = await atStripe.balance.retrieve()
  expect(nonZero(mine.available)).toEqual(nonZero(theirs.available))
  expect(nonZero(mine.pending)).toEqual(nonZero(theirs.pending))
}
