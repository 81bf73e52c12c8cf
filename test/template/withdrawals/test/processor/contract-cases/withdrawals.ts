// What every processor must do with a withdrawal (test/processor/contract-cases/cases.ts): paid once per key, the same
// request again gets the same outcome with one movement, and the lookup finds it by its key (and not a withdrawal never
// sent).
import { randomUUID } from 'node:crypto'
import { expect, it } from 'vitest'
import type { WithdrawalRequest } from '../../../src/processor/processor.js'
import type { ContractCases } from './cases.js'

export const contractCases: ContractCases = (under) => {
  it('when a withdrawal is made, then the same request again gets the same outcome, one movement, and the lookup finds it', async () => {
    const notBefore = new Date(Date.now() - 60_000)
    const { processor, processorAccount } = under()
    const request: WithdrawalRequest = {
      amountCents: 1000,
      currency: 'usd',
      accountId: 'acct_contract',
      processorAccount,
      idempotencyKey: randomUUID(),
    }
    const paid = await processor.withdrawal(request)
    expect(paid).toEqual({ status: 'paid', processorReference: expect.any(String) })
    expect(await processor.withdrawal(request)).toEqual(paid)
    expect(await under().movementsUnder(request.idempotencyKey)).toBe(1)
    expect(await processor.lookup({ kind: 'withdrawal', request, notBefore })).toEqual({
      kind: 'withdrawal',
      outcome: paid,
    })
    const neverSent = { ...request, idempotencyKey: randomUUID() }
    expect(await processor.lookup({ kind: 'withdrawal', request: neverSent, notBefore })).toBeUndefined()
  })
}
