// npm run ledger:backfill (docs/ledger.md, "Money moved before the ledger"): for books written before migration
// 0014, it posts what the live path would have posted, available as long after each capture as the pricing says,
// and a second run posts nothing.
import { beforeAll, describe, expect, it } from 'vitest'
import { chargeBody, useTestApp } from '../helpers/app.js'
import { laterAt, type LaterAtProcessor } from '../helpers/later.js'
import { runNpmScript } from '../helpers/processes.js'
import { useProcessor } from '../helpers/processors.js'

const DAY = 86_400_000
const processor = useProcessor('simulated')
const suite = useTestApp({ processor: processor.factory })
let later: LaterAtProcessor
beforeAll(async () => {
  later = await laterAt('simulated', suite.context, processor)
})

interface Posted {
  type: string
  source: string
  amount_cents: string
  fee_cents: string
  net_cents: string
  entry_accounts: string[]
  entry_cents: string[]
}

describe('npm run ledger:backfill', () => {
  it('when the books were written before the ledger, then it posts each capture, refund and dispute as the live path does, once', async () => {
    const { sql } = suite.context
    const user = await suite.context.newAccount()
    const charge = (await user.post('/v1/charges', chargeBody({ amount_cents: 10_000 }))).json()
    expect((await user.post(`/v1/charges/${charge.id}/refunds`, { amount_cents: 2_000 })).statusCode).toBe(201)
    const authorized = (await user.post('/v1/charges', chargeBody({ amount_cents: 8_000, capture: false }))).json()
    expect((await user.post(`/v1/charges/${authorized.id}/capture`, { amount_cents: 6_500 })).statusCode).toBe(200)
    const disputed = (await user.post('/v1/charges', chargeBody({ amount_cents: 3_000 }))).json()
    await later.dispute(disputed.processor_reference)
    await later.closeDispute(disputed.processor_reference, 'won')
    await user.post('/v1/charges', chargeBody({ source: 'pm_card_chargeDeclined' }))

    const postings = () =>
      sql<Posted[]>`
        select type, source, amount_cents, fee_cents, net_cents, entry_accounts, entry_cents from ledger_transactions
        where account_id = ${user.id} order by type, source`
    const live = await postings()
    expect(live.map((row) => row.type)).toEqual(['charge', 'charge', 'charge', 'dispute', 'dispute_reversal', 'refund'])
    // The books as a database before 0014 holds them: no postings (the ledger refuses deletes: its guard is lifted).
    await sql.begin(async (tx) => {
      await tx`alter table ledger_transactions disable trigger ledger_transactions_append_only`
      await tx`delete from ledger_transactions where account_id = ${user.id}`
      await tx`alter table ledger_transactions enable trigger ledger_transactions_append_only`
    })

    const env = { DATABASE_URL: suite.context.databaseUrl }
    const first = await runNpmScript(['ledger:backfill'], env)
    expect(first.code, first.stderr).toBe(0)
    expect(JSON.parse(first.stdout)).toMatchObject({ posted: 6 })
    expect(await postings()).toEqual(live)
    // Available as long after each capture as the pricing says, not after the backfill.
    const [capture] = await sql<{ available_on: Date; created_at: Date }[]>`
      select t.available_on, c.created_at from ledger_transactions t join charges c on c.id = t.source
      where t.account_id = ${user.id} and c.account_id = ${user.id} and t.source = ${charge.id}`
    expect(capture!.available_on.getTime() - capture!.created_at.getTime()).toBe(2 * DAY)

    const again = await runNpmScript(['ledger:backfill'], env)
    expect(again.code, again.stderr).toBe(0)
    expect(JSON.parse(again.stdout)).toMatchObject({ posted: 0 })
    expect(await postings()).toEqual(live)
  }, 120_000)
})
