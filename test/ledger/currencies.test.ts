// The pricing in each currency's own unit: an amount in a currency without cents (jpy) is in whole yen, and the
// fixed parts of the pricing, set in cents, are not read as yen; an account's pricing per currency, where it differs,
// is its own (FEE_FIXED_BY_CURRENCY, DISPUTE_FEE_BY_CURRENCY).
import { beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import type { BalanceTransaction } from '../../src/schemas/balance.js'
import { chargeBody, type TestAccount, useTestApp } from '../helpers/app.js'
import { laterAt, type LaterAtProcessor } from '../helpers/at-processor.js'
import { useProcessor } from '../helpers/processors.js'

const processor = useProcessor('simulated')
const suite = useTestApp({
  processor: processor.factory,
  config: { FEE_FIXED_BY_CURRENCY: 'eur=25', DISPUTE_FEE_BY_CURRENCY: 'jpy=1500,gbp=2000' },
})
let later: LaterAtProcessor
beforeAll(async () => {
  later = await laterAt('simulated', suite.context, processor)
})

async function feesOf(user: TestAccount, currency: string, source = 'pm_card_visa') {
  const charge = (await user.post('/v1/charges', chargeBody({ amount_cents: 1000, currency, source }))).json()
  const [txn] = (await user.get(`/v1/balance_transactions?source=${charge.id}`)).json().data as BalanceTransaction[]
  return { charge, fee: txn!.fee_details }
}

describe('the pricing per currency', () => {
  it('when 1000 yen are charged, then the fee is 2.9% of them and no fixed part: 30 cents is not ¥30', async () => {
    const user = await suite.context.newAccount()
    expect((await feesOf(user, 'jpy')).fee).toEqual([
      { type: 'processor_fee', amount_cents: 29, currency: 'jpy', description: '2.9% + 0' },
    ])
  })

  it('when a currency has its own fixed part, then its charges pay it; the others pay the pricing in cents', async () => {
    const user = await suite.context.newAccount()
    expect((await feesOf(user, 'eur')).fee).toEqual([
      { type: 'processor_fee', amount_cents: 29 + 25, currency: 'eur', description: '2.9% + 25' },
    ])
    expect((await feesOf(user, 'usd')).fee).toEqual([
      { type: 'processor_fee', amount_cents: 29 + 30, currency: 'usd', description: '2.9% + 30' },
    ])
  })

  it('when disputes open, then each is withdrawn with the dispute fee of its currency', async () => {
    const user = await suite.context.newAccount()
    const disputed = await Promise.all(
      ['jpy', 'gbp', 'usd', 'sek'].map(
        async (currency) => (await feesOf(user, currency, 'pm_card_createDispute')).charge,
      ),
    )
    await later.delivered()
    const disputes = (await user.get('/v1/balance_transactions?type=dispute&limit=10')).json()
      .data as BalanceTransaction[]
    const feeIn = (currency: string) => disputes.find((txn) => txn.currency === currency)?.fee_cents
    expect(disputed).toHaveLength(4)
    expect({ jpy: feeIn('jpy'), gbp: feeIn('gbp'), usd: feeIn('usd'), sek: feeIn('sek') }).toEqual({
      jpy: 1500,
      gbp: 2000,
      usd: 1500,
      sek: 1500,
    })
  })
})

describe('the configuration of the pricing per currency', () => {
  it('when an entry names no supported currency or is not an amount, then the process refuses to start, naming it', () => {
    for (const value of ['xyz=5', 'jpy=', 'JPY=5', 'jpy=5;eur=1', 'jpy=-1']) {
      expect(() => loadConfig({ FEE_FIXED_BY_CURRENCY: value }), value).toThrow(/FEE_FIXED_BY_CURRENCY/)
    }
    expect(loadConfig({ FEE_FIXED_BY_CURRENCY: 'jpy=0,eur=25' }).FEE_FIXED_BY_CURRENCY).toBe('jpy=0,eur=25')
  })
})
