// Payouts reconciled to the cent with either processor (docs/ledger.md, "Payouts"): after charges, a capture, refunds
// (one made in the processor's dashboard), a lost dispute and news that arrived late, the processor pays out;
// each payout's amount is what the books paid out of each account, the books' fees are the processor's, and a failed
// payout's money is paid out again by the next one. With Stripe, over signed webhooks from the Stripe test server,
// which lists a payout's balance transactions (GET /v1/balance_transactions?payout=) as Stripe does.
import { describe, expect, it } from 'vitest'
import { payoutReport } from '../../src/processor-events/payout-report.js'
import { chargeBody, type TestAccount, useTestApp } from '../helpers/app.js'
import { laterAt } from '../helpers/at-processor.js'
import { PROCESSORS, useProcessor } from '../helpers/processors.js'

const DAY = 86_400_000

describe.each(PROCESSORS)('payouts with the $name processor', ({ name }) => {
  const processor = useProcessor(name)
  const suite = useTestApp({ processor: processor.factory })

  async function ledgerOf(accountId: string) {
    const rows = await suite.context.sql<{ ledger_account: string; total: string }[]>`
      select ledger_account, sum(amount_cents) as total from ledger_entries where account_id = ${accountId}
      group by ledger_account order by ledger_account`
    return Object.fromEntries(rows.map((row) => [row.ledger_account, Number(row.total)]))
  }

  async function charge(account: TestAccount, body: Record<string, unknown>) {
    const response = await account.post('/v1/charges', chargeBody(body))
    expect(response.statusCode, response.body).toBe(201)
    return response.json() as { id: string; processor_reference: string }
  }

  it('when the processor pays out after every kind of movement, then each payout reconciles and every account’s balance is paid out', async () => {
    const later = await laterAt(name, suite.context, processor)
    const [shop, cafe] = [await suite.context.newAccount(), await suite.context.newAccount()]
    const first = await charge(shop, { amount_cents: 12_000 })
    const authorized = await charge(shop, { amount_cents: 8_000, capture: false })
    expect((await shop.post(`/v1/charges/${authorized.id}/capture`, { amount_cents: 6_500 })).statusCode).toBe(200)
    expect((await shop.post(`/v1/charges/${first.id}/refunds`, { amount_cents: 2_000 })).statusCode).toBe(201)
    const disputed = await charge(cafe, { amount_cents: 4_000 })
    const refundedThere = await charge(cafe, { amount_cents: 3_000 })
    await later.dispute(disputed.processor_reference)
    await later.closeDispute(disputed.processor_reference, 'lost')
    await later.refund(refundedThere.processor_reference, 1_000)
    await later.reconcile()

    const paid = await later.payOut(new Date(Date.now() + 3 * DAY))
    await later.settlePayout(paid, 'paid')
    await later.reconcile()
    for (const account of [shop, cafe]) {
      const books = await ledgerOf(account.id)
      expect(books.balance, account.id).toBe(0)
      expect(books.payouts_in_transit ?? 0).toBe(0)
      expect(books.bank).toBe(-(books.processor ?? 0) - (books.processor_fees ?? 0))
    }

    // A second payout fails; the third carries its money back out.
    await charge(cafe, { amount_cents: 5_000 })
    const failed = await later.payOut(new Date(Date.now() + 3 * DAY))
    await later.settlePayout(failed, 'failed')
    expect((await ledgerOf(cafe.id)).balance).toBeGreaterThan(0)
    const again = await later.payOut(new Date(Date.now() + 3 * DAY))
    expect((await ledgerOf(cafe.id)).balance).toBe(0)

    const lines = await payoutReport(suite.context.sql, new Date(Date.now() - DAY))
    const ours = lines.filter((line) => [paid, failed, again].includes(line.payout))
    expect(ours.map((line) => [line.payout, line.status])).toEqual([
      [paid, 'paid'],
      [failed, 'failed'],
      [again, 'in_transit'],
    ])
    for (const line of ours) {
      expect(line.differences, line.payout).toEqual([])
      expect(line.fee_differences, line.payout).toEqual([])
      expect(line.difference_cents).toBe(0)
    }
    // Each account sees its share as a payout of the API; the shares add up to what the processor paid out.
    for (const [n, status] of ['paid', 'failed', 'in_transit'].entries()) {
      const line = ours[n]!
      const shares = []
      for (const account of [shop, cafe]) {
        const response = await account.get(`/v1/payouts/${line.payout}`)
        if (response.statusCode === 404) continue
        expect(response.statusCode, response.body).toBe(200)
        const payout = response.json()
        expect(payout).toMatchObject({ id: line.payout, status, currency: 'usd' })
        expect(new Date(payout.arrival_date).getTime()).toBeGreaterThan(new Date(payout.created_at).getTime() - DAY)
        expect(payout.failure_code === null).toBe(status !== 'failed')
        shares.push(payout.amount_cents)
      }
      expect(
        shares.reduce((sum, cents) => sum + cents, 0),
        line.payout,
      ).toBe(line.amount_cents)
    }
    const [first_] = ours
    expect(first_).toMatchObject({ refunds_cents: -3_000, disputes_cents: -4_000 })
    expect(ours[2]?.payout_failures_cents).toBe(ours[1]?.amount_cents)
    if (name === 'stripe') {
      // What each payout carries came from Stripe's own list, as its reconciliation guide says to read it.
      const listed = processor.stripe().requests.filter((request) => request.path === '/v1/balance_transactions')
      expect(listed.map((request) => request.form.payout)).toEqual(expect.arrayContaining([paid, failed, again]))
    }
  })
})
