// Withdrawals against the ledger's balance, a fork's money-moving resource (docs/extending.md): paid once per key,
// never more than the available balance holds even when withdrawals race, a refusal frees the key, a lost answer
// settles itself, and a balance the processor took below zero on its own (a dispute lost after the money left) is
// shown and refuses new withdrawals with a 422, never a 500. Charges fund the balance, at once here (no fee, no
// delay).
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { recoverAbandonedClaims } from '../../src/recovery/recover-abandoned-claims.js'
import { recoveries } from '../../src/recovery/registry.js'
import { controllableProcessor, useTestApp, type TestAccount } from '../helpers/app.js'

const processor = controllableProcessor()
const suite = useTestApp({
  processor: processor.factory,
  config: { FEE_PERCENT_BASIS_POINTS: 0, FEE_FIXED_CENTS: 0, DISPUTE_FEE_CENTS: 1500, FUNDS_AVAILABLE_AFTER_DAYS: 0 },
})
const recover = () =>
  recoverAbandonedClaims(
    suite.context.sql,
    recoveries(suite.context.processor, suite.context.sql),
    { graceSeconds: 0, leaseSeconds: 30, batchSize: 100 },
    pino({ level: 'silent' }),
  )

/** An account whose balance a charge of `cents` funded; the charge's processor reference. */
async function fundedAccount(cents: number): Promise<TestAccount & { funding: string }> {
  const user = await suite.context.newAccount()
  const charge = await user.post('/v1/charges', { amount_cents: cents, currency: 'usd', source: 'pm_card_visa' })
  expect(charge.statusCode).toBe(201)
  return Object.assign(user, { funding: charge.json().processor_reference as string })
}
/** What GET /v1/balance says is available in usd. */
const balance = async (user: TestAccount) =>
  (await user.get('/v1/balance')).json().available.find((funds: { currency: string }) => funds.currency === 'usd')
    ?.amount_cents
const withdrawal = (amount_cents: number) => ({ amount_cents, currency: 'usd' })

describe('POST /v1/withdrawals', () => {
  it('when a withdrawal is made, then it is paid once, its retry replays it, and the balance and the event say so', async () => {
    const user = await fundedAccount(10_000)
    const first = await user.post('/v1/withdrawals', withdrawal(2500), { key: 'withdrawal-1' })
    // Its row read first: a table missing (the migration) is named here, not as a bare 500; a route missing, below.
    const rows = await suite.context.sql`select status, amount_cents from withdrawals where account_id = ${user.id}`
    expect(first.statusCode, first.body).toBe(201)
    expect(rows).toEqual([{ status: 'paid', amount_cents: 2500 }])
    expect(first.json()).toMatchObject({ object: 'withdrawal', status: 'paid', amount_cents: 2500 })
    const retry = await user.post('/v1/withdrawals', withdrawal(2500), { key: 'withdrawal-1' })
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(await balance(user)).toBe(7500)
    expect((await user.get('/v1/events?type=withdrawal.paid')).json().data).toHaveLength(1)
    expect((await user.get(`/v1/withdrawals/${first.json().id}`)).json()).toEqual(first.json())
  })

  it('when withdrawals race for more than the balance holds, then it is never overdrawn', async () => {
    const user = await fundedAccount(10_000)
    const responses = await Promise.all(Array.from({ length: 5 }, () => user.post('/v1/withdrawals', withdrawal(3000))))
    expect(responses.map((response) => response.statusCode).sort()).toEqual([201, 201, 201, 422, 422])
    expect(await balance(user)).toBe(1000)
  })

  it('when the balance does not hold it, then 422, and the same key may carry a corrected amount', async () => {
    const user = await fundedAccount(1000)
    const refused = await user.post('/v1/withdrawals', withdrawal(5000), { key: 'withdrawal-fix' })
    expect(refused.statusCode).toBe(422)
    expect(refused.json().type).toMatch(/\/withdrawal-exceeds-balance$/)
    expect((await user.post('/v1/withdrawals', withdrawal(500), { key: 'withdrawal-fix' })).statusCode).toBe(201)
  })

  it('when the processor paid and the answer was lost, then the recovery worker records it; when it never saw it, the balance is given back', async () => {
    const user = await fundedAccount(10_000)
    processor.loseNextAnswer()
    expect((await user.post('/v1/withdrawals', withdrawal(1000), { key: 'withdrawal-lost' })).statusCode).toBe(503)
    processor.timeOutNext()
    expect((await user.post('/v1/withdrawals', withdrawal(2000), { key: 'withdrawal-unseen' })).statusCode).toBe(503)
    expect(await balance(user)).toBe(7000)

    expect(await recover()).toEqual({ settled: 1, released: 1, failed: 0 })

    expect(await balance(user)).toBe(9000)
    const replay = await user.post('/v1/withdrawals', withdrawal(1000), { key: 'withdrawal-lost' })
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    // The one the processor never saw is canceled, and the ledger shows its amount taken and given back.
    const listed = (await user.get('/v1/withdrawals')).json().data
    expect(listed.map((each: { status: string; amount_cents: number }) => [each.status, each.amount_cents])).toEqual([
      ['canceled', 2000],
      ['paid', 1000],
    ])
    const canceled = listed[0].id
    const moved = (await user.get(`/v1/balance_transactions?source=${canceled}`)).json().data
    expect(moved.map((txn: { type: string; amount_cents: number }) => [txn.type, txn.amount_cents])).toEqual([
      ['payout_failure', 2000],
      ['payout', -2000],
    ])
  })

  it('when a dispute is lost after the balance was paid out, then the balance shows below zero and a withdrawal is refused with a 422', async () => {
    const user = await fundedAccount(4000)
    expect((await user.post('/v1/withdrawals', withdrawal(4000))).statusCode).toBe(201)
    const dispute = (path: string, body: object = {}) =>
      suite.context.app.inject({
        method: 'POST',
        url: `/simulated-processor/payments/${user.funding}/${path}`,
        payload: body,
      })
    expect((await dispute('dispute')).statusCode).toBe(200)
    expect((await dispute('dispute/close', { outcome: 'lost' })).statusCode).toBe(200)

    expect(await balance(user)).toBe(-4000 - 1500)
    const refused = await user.post('/v1/withdrawals', withdrawal(100))
    expect(refused.statusCode).toBe(422)
    expect(refused.json().type).toMatch(/\/withdrawal-exceeds-balance$/)
    // A new charge pays the debt first.
    await user.post('/v1/charges', { amount_cents: 6000, currency: 'usd', source: 'pm_card_visa' })
    expect(await balance(user)).toBe(500)
    expect((await user.post('/v1/withdrawals', withdrawal(500))).statusCode).toBe(201)
  })
})
