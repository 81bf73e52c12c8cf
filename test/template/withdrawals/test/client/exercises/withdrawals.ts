// Withdrawals through the client, for the client test's every-operation check (test/client/exercises/exercise.ts).
import type { ClientExercise } from './exercise.js'

export const exercise: ClientExercise = async (client) => {
  // A charge funds the balance (available at once in the client test).
  await client.charges.create({ amount_cents: 10_000, currency: 'usd', source: 'pm_card_visa' })
  const paid = await client.withdrawals.create({ amount_cents: 1000, currency: 'usd' })
  if ((await client.withdrawals.retrieve(paid.data.id)).data.id !== paid.data.id)
    throw new Error('the withdrawal retrieved is not the one made')
  if ((await client.withdrawals.list()).data.data.length !== 1)
    throw new Error('the list does not hold the one withdrawal')
}
