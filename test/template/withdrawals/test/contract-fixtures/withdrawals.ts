// Withdrawals for the contract tests (test/contract-fixtures/fixture.ts): a withdrawal needs a funded balance
// before its valid body can succeed (a charge funds it, available at once in the contract tests), and a withdrawal
// id is made by paying one out.
import type { TestAccount } from '../helpers/app.js'
import type { ContractFixture } from './fixture.js'

const fund = async (user: TestAccount) => {
  await user.post('/v1/charges', { amount_cents: 100_000, currency: 'usd', source: 'pm_card_visa' })
}

export const fixture: ContractFixture = {
  prepare: { createWithdrawal: fund },
  ids: {
    WithdrawalId: async (user) => {
      await fund(user)
      return (await user.post('/v1/withdrawals', { amount_cents: 100, currency: 'usd' })).json().id as string
    },
  },
}
