// Payouts against a balance, a fork's money-moving resource (docs/extending.md): paid once per key, never more than
// the balance holds even when payouts race, a refusal frees the key, and a lost answer settles itself.
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { recoverAbandonedClaims } from '../../src/recovery/recover-abandoned-claims.js'
import { recoveries } from '../../src/recovery/registry.js'
import { controllableProcessor, useTestApp, type TestAccount } from '../helpers/app.js'

const processor = controllableProcessor()
const suite = useTestApp({ processor: processor.factory })
const recover = () =>
  recoverAbandonedClaims(
    suite.context.sql,
    recoveries(suite.context.processor, suite.context.sql),
    { graceSeconds: 0, leaseSeconds: 30, batchSize: 100 },
    pino({ level: 'silent' }),
  )

async function fundedAccount(cents: number): Promise<TestAccount> {
  const user = await suite.context.newAccount()
  await suite.context
    .sql`insert into payout_balances (account_id, currency, available_cents) values (${user.id}, 'usd', ${cents})`
  return user
}
const balance = async (user: TestAccount) =>
  Number(
    (await suite.context.sql`select available_cents from payout_balances where account_id = ${user.id}`)[0]!
      .available_cents,
  )
const payout = (amount_cents: number) => ({ amount_cents, currency: 'usd' })

describe('POST /v1/payouts', () => {
  it('when a payout is made, then it is paid once, its retry replays it, and the balance and the event say so', async () => {
    const user = await fundedAccount(10_000)
    const first = await user.post('/v1/payouts', payout(2500), { key: 'payout-1' })
    expect(first.statusCode, first.body).toBe(201)
    expect(first.json()).toMatchObject({ object: 'payout', status: 'paid', amount_cents: 2500 })
    const retry = await user.post('/v1/payouts', payout(2500), { key: 'payout-1' })
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(await balance(user)).toBe(7500)
    expect((await user.get('/v1/events?type=payout.paid')).json().data).toHaveLength(1)
    expect((await user.get(`/v1/payouts/${first.json().id}`)).json()).toEqual(first.json())
  })

  it('when payouts race for more than the balance holds, then it is never overdrawn', async () => {
    const user = await fundedAccount(10_000)
    const responses = await Promise.all(Array.from({ length: 5 }, () => user.post('/v1/payouts', payout(3000))))
    expect(responses.map((response) => response.statusCode).sort()).toEqual([201, 201, 201, 422, 422])
    expect(await balance(user)).toBe(1000)
  })

  it('when the balance does not hold it, then 422, and the same key may carry a corrected amount', async () => {
    const user = await fundedAccount(1000)
    const refused = await user.post('/v1/payouts', payout(5000), { key: 'payout-fix' })
    expect(refused.statusCode).toBe(422)
    expect(refused.json().type).toMatch(/\/payout-exceeds-balance$/)
    expect((await user.post('/v1/payouts', payout(500), { key: 'payout-fix' })).statusCode).toBe(201)
  })

  it('when the processor paid and the answer was lost, then the recovery worker records it; when it never saw it, the balance is given back', async () => {
    const user = await fundedAccount(10_000)
    processor.loseNextAnswer()
    expect((await user.post('/v1/payouts', payout(1000), { key: 'payout-lost' })).statusCode).toBe(503)
    processor.timeOutNext()
    expect((await user.post('/v1/payouts', payout(2000), { key: 'payout-unseen' })).statusCode).toBe(503)
    expect(await balance(user)).toBe(7000)

    expect(await recover()).toEqual({ settled: 1, released: 1, failed: 0 })

    expect(await balance(user)).toBe(9000)
    const replay = await user.post('/v1/payouts', payout(1000), { key: 'payout-lost' })
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
  })
})
