// Every processor call is given up after PROCESSOR_TIMEOUT_MS as an unknown outcome: the recovery worker's
// "the processor never saw it" rests on no call outliving that (src/processor/instrumented.ts).
import { describe, expect, it } from 'vitest'
import { instrumented } from '../../src/processor/instrumented.js'
import { type PaymentProcessor, PROCESSOR_METHODS, ProcessorUnavailableError } from '../../src/processor/processor.js'

const never = () => new Promise<never>(() => {})
const lookupOfK = {
  kind: 'charge' as const,
  request: {
    amountCents: 100,
    currency: 'usd',
    source: 'pm_card_visa',
    accountId: 'acct_1',
    processorAccount: null,
    idempotencyKey: 'k',
    chargeId: 'ch_000000000000000000000000',
  },
  notBefore: new Date(),
}
const silentProcessor = Object.fromEntries(
  PROCESSOR_METHODS.map((method) => [method, never]),
) as unknown as PaymentProcessor

describe('instrumented', () => {
  it('when the processor does not answer within the timeout, then the call fails as an unknown outcome', async () => {
    const processor = instrumented(silentProcessor, { timeoutMs: 50 })
    const call = lookupOfK.request
    await expect(processor.charge(call)).rejects.toBeInstanceOf(ProcessorUnavailableError)
    await expect(processor.lookup(lookupOfK)).rejects.toThrow(/did not answer lookup within 50 ms/)
  })

  it('when the processor answers in time, then its answer is passed on', async () => {
    const processor = instrumented({ ...silentProcessor, lookup: async () => undefined }, { timeoutMs: 5000 })
    await expect(processor.lookup(lookupOfK)).resolves.toBeUndefined()
  })
})
