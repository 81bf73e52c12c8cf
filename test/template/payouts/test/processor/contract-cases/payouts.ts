// What every processor must do with a payout (test/processor/contract-cases/cases.ts): paid once per key, the same
// request again gets the same outcome with one movement, and the lookup finds it by its key (and not a payout never
// sent).
import { randomUUID } from 'node:crypto'
import { expect, it } from 'vitest'
import type { PayoutRequest } from '../../../src/processor/processor.js'
import type { ContractCases } from './cases.js'

export const contractCases: ContractCases = (under) => {
  it('when a payout is made, then the same request again gets the same outcome, one movement, and the lookup finds it', async () => {
    const notBefore = new Date(Date.now() - 60_000)
    const request: PayoutRequest = {
      amountCents: 1000,
      currency: 'usd',
      accountId: 'acct_contract',
      idempotencyKey: randomUUID(),
    }
    const { processor } = under()
    const paid = await processor.payout(request)
    expect(paid).toEqual({ status: 'paid', processorReference: expect.any(String) })
    expect(await processor.payout(request)).toEqual(paid)
    expect(await under().movementsUnder(request.idempotencyKey)).toBe(1)
    expect(await processor.lookup({ kind: 'payout', request, notBefore })).toEqual({ kind: 'payout', outcome: paid })
    const neverSent = { ...request, idempotencyKey: randomUUID() }
    expect(await processor.lookup({ kind: 'payout', request: neverSent, notBefore })).toBeUndefined()
  })
}
