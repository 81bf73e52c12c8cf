// Payouts for the contract tests (test/contract-fixtures/fixture.ts): a payout needs a funded balance before its
// valid body can succeed, and a payout id is made by paying one out.
import type { Sql } from '../../src/db/connect.js'
import type { TestAccount } from '../helpers/app.js'
import type { ContractFixture } from './fixture.js'

const fund = async (user: TestAccount, sql: Sql) => {
  await sql`
    insert into payout_balances (account_id, currency, available_cents) values (${user.id}, 'usd', 100000)
    on conflict (account_id, currency) do update set available_cents = excluded.available_cents`
}

export const fixture: ContractFixture = {
  prepare: { createPayout: fund },
  ids: {
    PayoutId: async (user, _operationId, sql) => {
      await fund(user, sql)
      return (await user.post('/v1/payouts', { amount_cents: 100, currency: 'usd' })).json().id as string
    },
  },
}
