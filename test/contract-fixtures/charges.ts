// Charges for the contract tests: a captured charge for the operations on a charge, an authorization for capture
// and void (test/contract-fixtures/fixture.ts).
import { chargeBody, type TestAccount } from '../helpers/app.js'
import type { ContractFixture } from './fixture.js'

export const newCharge = async (user: TestAccount, extra = {}) =>
  (await user.post('/v1/charges', chargeBody(extra))).json().id as string

export const fixture: ContractFixture = {
  ids: {
    ChargeId: (user, operationId) =>
      newCharge(user, ['captureCharge', 'voidCharge'].includes(operationId) ? { capture: false } : {}),
  },
}
