// Payouts in the ledger (docs/ledger.md, "Payouts"): the processor pays its balance out to the bank, and each
// account's share of what a payout carries leaves its balance, is in transit, then at the bank, or back in the
// balance if the payout fails. Told by the processor's events, in any order, twice, or at the same instant: each leg
// posts once, and each account's share is its payout in the API (GET /v1/payouts), each change told once as an
// event. The simulated processor's payout controls stand for its schedule.
import { beforeAll, describe, expect, it } from 'vitest'
import type { Sql } from '../../src/db/connect.js'
import { pino } from 'pino'
import { migrate } from '../../src/db/migrate.js'
import { acceptEvent } from '../../src/processor-events/inbox.js'
import { payoutsApplied } from '../../src/observability/metrics.js'
import { comparePayouts, payoutReport } from '../../src/processor-events/payout-report.js'
import type { PayoutState, ProcessorEvent } from '../../src/processor/later-outcomes.js'
import type { BalanceTransaction } from '../../src/schemas/balance.js'
import type { Payout } from '../../src/schemas/payout.js'
import { chargeBody, type TestAccount, useTestApp } from '../helpers/app.js'
import { LATER_SETTINGS } from '../helpers/at-processor.js'
import { runNpmScript } from '../helpers/processes.js'
import { useProcessor } from '../helpers/processors.js'

const DAY = 86_400_000
let ahead = 0
const processor = useProcessor('simulated')
const suite = useTestApp({ processor: processor.factory, clock: () => new Date(Date.now() + ahead) })
let sql: Sql
beforeAll(() => {
  sql = suite.context.sql
})

const feeOf = (amountCents: number) => Math.round(amountCents * 0.029) + 30

/** The simulated processor's control: answers what it did (its event, and what became of it in the books). */
async function control(path: string, body: object = {}) {
  const response = await suite.context.app.inject({ method: 'POST', url: `/simulated-processor${path}`, payload: body })
  expect(response.statusCode, response.body).toBe(200)
  return response.json() as { event: string; type: string; delivered: string; changes: PayoutState[] }
}

/** Pays out what is available three days from now (past every charge's two days). */
async function payOut() {
  const done = await control('/payouts', { available_by: new Date(Date.now() + 3 * DAY).toISOString() })
  expect(done.delivered).toBe('applied')
  return done.changes[0] as PayoutState
}

async function transactionsOf(account: TestAccount, query = ''): Promise<BalanceTransaction[]> {
  const response = await account.get(`/v1/balance_transactions?limit=100${query}`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json().data
}

async function ledgerOf(accountId: string) {
  const rows = await sql<{ ledger_account: string; total: string }[]>`
    select ledger_account, sum(amount_cents) as total from ledger_entries where account_id = ${accountId}
    group by ledger_account order by ledger_account`
  return Object.fromEntries(rows.map((row) => [row.ledger_account, Number(row.total)]))
}

async function balanceOf(account: TestAccount) {
  const balance = (await account.get('/v1/balance')).json()
  return { available: balance.available[0]?.amount_cents, pending: balance.pending[0]?.amount_cents }
}

async function payoutOf(account: TestAccount, reference: string) {
  const response = await account.get(`/v1/payouts/${reference}`)
  expect(response.statusCode, response.body).toBe(200)
  return response.json() as Payout
}

/** The account's events about payouts, oldest first: their types and the status each told. */
async function payoutEventsOf(account: TestAccount) {
  const response = await account.get('/v1/events?limit=100')
  expect(response.statusCode, response.body).toBe(200)
  return (response.json().data as { type: string; data: { object: Payout } }[])
    .filter((event) => event.type.startsWith('payout.'))
    .reverse()
    .map((event) => [event.type, event.data.object.status])
}

/** The processor's event of a payout, as it told it (to deliver again, or out of order). */
async function eventOf(id: string): Promise<ProcessorEvent> {
  const [row] = await sql<{ id: string; type: string; changes: PayoutState[]; created_at: Date }[]>`
    select id, type, changes, created_at from simulated_processor.events where id = ${id}`
  return { id: row!.id, type: row!.type, createdAt: row!.created_at, changes: row!.changes }
}

describe('a payout', () => {
  it('when the processor pays out, then each account’s share of what it carries leaves its balance into transit, and arrives at the bank', async () => {
    const [shop, cafe] = [await suite.context.newAccount(), await suite.context.newAccount()]
    const first = (await shop.post('/v1/charges', chargeBody({ amount_cents: 10_000 }))).json()
    await shop.post('/v1/charges', chargeBody({ amount_cents: 5_000 }))
    expect((await shop.post(`/v1/charges/${first.id}/refunds`, { amount_cents: 1_000 })).statusCode).toBe(201)
    await cafe.post('/v1/charges', chargeBody({ amount_cents: 2_500 }))
    const shopNet = 10_000 - feeOf(10_000) + 5_000 - feeOf(5_000) - 1_000
    const cafeNet = 2_500 - feeOf(2_500)

    const payout = await payOut()
    expect(payout.status).toBe('in_transit')
    // It carries everything the processor holds of every account (earlier tests' too): its amount is their net.
    expect(payout.amountCents).toBe(payout.carried!.reduce((sum, each) => sum + each.netCents, 0))

    for (const [account, net, carried] of [
      [shop, shopNet, 4],
      [cafe, cafeNet, 2],
    ] as const) {
      const listed = await transactionsOf(account, `&payout=${payout.reference}`)
      expect(listed.map((txn) => txn.type).sort()).toEqual(
        (carried === 4 ? ['charge', 'charge', 'payout', 'refund'] : ['charge', 'payout']).sort(),
      )
      const own = listed.find((txn) => txn.type === 'payout')!
      expect(own).toMatchObject({
        source: payout.reference,
        amount_cents: -net,
        fee_cents: 0,
        net_cents: -net,
        payout: payout.reference,
        status: 'available',
      })
      expect(listed.every((txn) => txn.payout === payout.reference)).toBe(true)
      ahead = 3 * DAY
      expect(await balanceOf(account)).toEqual({ available: 0, pending: 0 })
      ahead = 0
      expect(await ledgerOf(account.id)).toMatchObject({ balance: 0, payouts_in_transit: net })
    }

    const paid = await control(`/payouts/${payout.reference}/paid`)
    expect(paid.delivered).toBe('applied')
    expect(await ledgerOf(shop.id)).toMatchObject({ balance: 0, payouts_in_transit: 0, bank: shopNet })
    expect(await ledgerOf(cafe.id)).toMatchObject({ balance: 0, payouts_in_transit: 0, bank: cafeNet })
    // The arrival moves no balance: the balance transactions do not show it.
    expect((await transactionsOf(shop)).filter((txn) => txn.source === payout.reference)).toHaveLength(1)
    // Paid out once: nothing is left to pay.
    const nothing = await suite.context.app.inject({
      method: 'POST',
      url: '/simulated-processor/payouts',
      payload: { available_by: new Date(Date.now() + 3 * DAY).toISOString() },
    })
    expect(nothing.statusCode, nothing.body).toBe(409)
  })

  it('when a payout fails, then each share goes back into the balance, once, however its news is ordered or repeated', async () => {
    const user = await suite.context.newAccount()
    await user.post('/v1/charges', chargeBody({ amount_cents: 4_000 }))
    const net = 4_000 - feeOf(4_000)
    const payout = await payOut()
    const created = await eventOf(
      (
        await sql<{ id: string }[]>`
      select id from simulated_processor.events where type = 'payout.created' order by seq desc limit 1`
      )[0]!.id,
    )
    const failed = await control(`/payouts/${payout.reference}/failed`)
    expect(failed.delivered).toBe('applied')
    // payout.created again (a second delivery, or overtaken by the failure): nothing moves.
    expect(await acceptEvent(sql, { ...created, id: `${created.id}_again` }, 'webhook', LATER_SETTINGS)).toBe('applied')
    const mine = (await transactionsOf(user)).filter((txn) => txn.source === payout.reference)
    expect(mine.map((txn) => [txn.type, txn.amount_cents])).toEqual([
      ['payout_failure', net],
      ['payout', -net],
    ])
    expect(await ledgerOf(user.id)).toMatchObject({ balance: net, payouts_in_transit: 0 })
    ahead = 3 * DAY
    expect(await balanceOf(user)).toEqual({ available: net, pending: 0 })
    ahead = 0
    // A paid told after the failure (reordered) arrives no more.
    const stale: ProcessorEvent = {
      ...created,
      id: `${created.id}_paid`,
      type: 'payout.paid',
      changes: [{ ...payout, status: 'paid' }],
    }
    await acceptEvent(sql, stale, 'webhook', LATER_SETTINGS)
    expect(await ledgerOf(user.id)).toMatchObject({ balance: net, payouts_in_transit: 0 })
    expect((await ledgerOf(user.id)).bank ?? 0).toBe(0)

    // The next payout carries the failed one's money back out, as its own balance transaction (payout_failure).
    const again = await payOut()
    expect(again.carried!.filter((each) => each.type === 'payout_failure')).toEqual([
      expect.objectContaining({ objectReference: payout.reference, amountCents: payout.amountCents }),
    ])
    const carriedAgain = await transactionsOf(user, `&payout=${again.reference}`)
    expect(carriedAgain.map((txn) => [txn.type, txn.amount_cents])).toEqual([
      ['payout', -net],
      ['payout_failure', net],
    ])
    expect(await ledgerOf(user.id)).toMatchObject({ balance: 0, payouts_in_transit: net })
  })

  it('when its events arrive at the same instant, then each leg is posted once and none answers an error', async () => {
    const user = await suite.context.newAccount()
    await user.post('/v1/charges', chargeBody({ amount_cents: 7_000 }))
    const net = 7_000 - feeOf(7_000)
    const payout = await payOut()
    const told = (status: PayoutState['status'], n: number): ProcessorEvent => ({
      id: `evt_same_instant_${payout.reference}_${status}_${n}`,
      type: `payout.${status}`,
      createdAt: new Date(),
      changes: [{ ...payout, status }],
    })
    const deliveries = [0, 1, 2, 3].flatMap((n) => [told('in_transit', n), told('paid', n)])
    const results = await Promise.all(deliveries.map((event) => acceptEvent(sql, event, 'webhook', LATER_SETTINGS)))
    expect(new Set(results)).toEqual(new Set(['applied']))
    const legs = await sql<{ type: string; count: number }[]>`
      select type, count(*)::int as count from ledger_transactions where account_id = ${user.id} and
        source = ${payout.reference} group by type order by type`
    expect(legs).toEqual([
      { type: 'payout', count: 1 },
      { type: 'payout_arrival', count: 1 },
    ])
    expect(await ledgerOf(user.id)).toMatchObject({ balance: 0, payouts_in_transit: 0, bank: net })
    // The control told payout.created before these: of eight deliveries, one moved it, and one event says so.
    expect(await payoutEventsOf(user)).toEqual([
      ['payout.created', 'in_transit'],
      ['payout.paid', 'paid'],
    ])
    expect(await payoutOf(user, payout.reference)).toMatchObject({ status: 'paid', amount_cents: net })
  })

  it('when it carries a charge the books do not hold yet, then it waits; when it is not told what it carries, it posts nothing', async () => {
    const waiting: ProcessorEvent = {
      id: 'evt_payout_waits',
      type: 'payout.created',
      createdAt: new Date(),
      changes: [
        {
          object: 'payout',
          reference: 'po_waits',
          status: 'in_transit',
          amountCents: 970,
          currency: 'usd',
          carried: [
            {
              reference: 'txn_unknown',
              type: 'charge',
              paymentReference: 'pi_unknown',
              chargeId: 'ch_0123456789abcdef01234567',
              amountCents: 1000,
              feeCents: 30,
              netCents: 970,
            },
          ],
        },
      ],
    }
    expect(await acceptEvent(sql, waiting, 'webhook', LATER_SETTINGS)).toBe('waiting')
    const untold: ProcessorEvent = {
      id: 'evt_payout_untold',
      type: 'payout.created',
      createdAt: new Date(),
      changes: [{ object: 'payout', reference: 'po_untold', status: 'in_transit', amountCents: 100, currency: 'usd' }],
    }
    expect(await acceptEvent(sql, untold, 'webhook', LATER_SETTINGS)).toBe('ignored')
    const [{ count }] = (await sql`
      select count(*)::int as count from ledger_transactions where source in ('po_waits', 'po_untold')`) as unknown as [
      { count: number },
    ]
    expect(count).toBe(0)
  })

  it('when an event’s transaction rolls back after its payout applied, then payouts_applied_total does not count it', async () => {
    const user = await suite.context.newAccount()
    const charge = (await user.post('/v1/charges', chargeBody({ amount_cents: 3_000 }))).json()
    const payout = await payOut()
    const dispute = {
      object: 'dispute' as const,
      reference: `dp_${charge.id}`,
      paymentReference: charge.processor_reference,
      chargeId: charge.id,
      status: 'needs_response' as const,
      amountCents: 1_000,
      reason: 'fraudulent',
      withdrawal: { amountCents: 1_000 },
    }
    const told = (id: string, changes: ProcessorEvent['changes']) => ({
      id,
      type: 'test',
      createdAt: new Date(),
      changes,
    })
    expect(await acceptEvent(sql, told(`evt_${dispute.reference}`, [dispute]), 'webhook', LATER_SETTINGS)).toBe(
      'applied',
    )
    const paid = async () =>
      (await payoutsApplied.get()).values.find((value) => value.labels.status === 'paid')?.value ?? 0
    const before = await paid()
    // The payout told as paid, then the dispute told with another amount than the one posted: a contradiction the
    // ledger refuses, and the whole event rolls back (the payout's arrival with it).
    const contradicted = told(`evt_${payout.reference}_contradicted`, [
      { ...payout, status: 'paid' },
      { ...dispute, status: 'lost', amountCents: 2_000, withdrawal: { amountCents: 2_000 } },
    ])
    await expect(acceptEvent(sql, contradicted, 'webhook', LATER_SETTINGS)).rejects.toThrow(
      /was posted as -?1000, and is now told as -?2000/,
    )
    expect(await ledgerOf(user.id)).not.toHaveProperty('bank')
    expect(await paid()).toBe(before)
    // Told again without the contradiction: it applies, and counts once.
    const arrived = told(`evt_${payout.reference}_paid`, [{ ...payout, status: 'paid' }])
    expect(await acceptEvent(sql, arrived, 'webhook', LATER_SETTINGS)).toBe('applied')
    expect(await paid()).toBe(before + 1)
  })
})

describe('a payout in the API', () => {
  it('when the processor pays out, then each account sees its own share as a payout, in transit, then paid, each change an event', async () => {
    const [shop, cafe, stranger] = [
      await suite.context.newAccount(),
      await suite.context.newAccount(),
      await suite.context.newAccount(),
    ]
    await shop.post('/v1/charges', chargeBody({ amount_cents: 6_000 }))
    await shop.post('/v1/charges', chargeBody({ amount_cents: 1_500 }))
    await cafe.post('/v1/charges', chargeBody({ amount_cents: 2_000 }))
    const payout = await payOut()

    for (const [account, net] of [
      [shop, 6_000 - feeOf(6_000) + 1_500 - feeOf(1_500)],
      [cafe, 2_000 - feeOf(2_000)],
    ] as const) {
      const carried = await transactionsOf(account, `&payout=${payout.reference}`)
      const leg = carried.find((txn) => txn.type === 'payout')!
      expect(await payoutOf(account, payout.reference)).toEqual({
        id: payout.reference,
        object: 'payout',
        amount_cents: net,
        currency: 'usd',
        status: 'in_transit',
        arrival_date: payout.arrivalDate,
        failure_code: null,
        balance_transaction: leg.id,
        failure_balance_transaction: null,
        created_at: expect.any(String),
      })
      // What it carried of this account adds up to its amount.
      const others = carried.filter((txn) => txn.type !== 'payout')
      expect(others.reduce((sum, txn) => sum + txn.net_cents, 0)).toBe(net)
      expect(leg.net_cents).toBe(-net)
    }
    // An account with nothing in it does not see it.
    const unseen = await stranger.get(`/v1/payouts/${payout.reference}`)
    expect(unseen.statusCode).toBe(404)
    expect(unseen.json().type).toMatch(/resource-not-found$/)
    expect((await stranger.get('/v1/payouts')).json().data).toEqual([])

    await control(`/payouts/${payout.reference}/paid`)
    expect(await payoutOf(shop, payout.reference)).toMatchObject({ status: 'paid', failure_code: null })
    expect(await payoutEventsOf(shop)).toEqual([
      ['payout.created', 'in_transit'],
      ['payout.paid', 'paid'],
    ])
    const listed = (query: string) => shop.get(`/v1/payouts${query}`).then((response) => response.json().data)
    expect((await listed('?status=paid')).map((each: Payout) => each.id)).toContain(payout.reference)
    expect(await listed('?status=in_transit')).toEqual([])
    expect((await shop.get('/v1/payouts?status=arrived')).statusCode).toBe(400)
  })

  it('when a paid payout fails later, then it says failed with the processor’s code, and a stale paid or created changes nothing', async () => {
    const user = await suite.context.newAccount()
    await user.post('/v1/charges', chargeBody({ amount_cents: 5_000 }))
    const net = 5_000 - feeOf(5_000)
    const payout = await payOut()
    await control(`/payouts/${payout.reference}/paid`)
    const told = (id: string, change: Partial<PayoutState>): ProcessorEvent => ({
      id: `evt_${payout.reference}_${id}`,
      type: `payout.${change.status}`,
      createdAt: new Date(),
      changes: [{ ...payout, ...change }],
    })
    const returned = told('returned', { status: 'failed', failureCode: 'account_closed' })
    expect(await acceptEvent(sql, returned, 'webhook', LATER_SETTINGS)).toBe('applied')
    for (const stale of [told('stale_paid', { status: 'paid' }), told('stale_created', { status: 'in_transit' })])
      expect(await acceptEvent(sql, stale, 'webhook', LATER_SETTINGS)).toBe('applied')

    const failure = (await transactionsOf(user)).find(
      (txn) => txn.type === 'payout_failure' && txn.source === payout.reference,
    )!
    expect(await payoutOf(user, payout.reference)).toMatchObject({
      amount_cents: net,
      status: 'failed',
      failure_code: 'account_closed',
      failure_balance_transaction: failure.id,
    })
    expect(failure.net_cents).toBe(net)
    expect(await ledgerOf(user.id)).toMatchObject({ balance: net, bank: 0 })
    expect(await payoutEventsOf(user)).toEqual([
      ['payout.created', 'in_transit'],
      ['payout.paid', 'paid'],
      ['payout.failed', 'failed'],
    ])
  })

  it('when the list is paged, then newest first; a cursor of another account’s payout is a 400', async () => {
    const [user, other] = [await suite.context.newAccount(), await suite.context.newAccount()]
    const references: string[] = []
    for (const amount of [1_000, 2_000, 3_000]) {
      await user.post('/v1/charges', chargeBody({ amount_cents: amount }))
      references.unshift((await payOut()).reference)
    }
    await other.post('/v1/charges', chargeBody({ amount_cents: 1_000 }))
    const theirs = (await payOut()).reference
    const page = (query: string) => user.get(`/v1/payouts${query}`)
    const ids = async (query: string) => (await page(query)).json().data.map((each: Payout) => each.id)
    expect(await ids('')).toEqual(references)
    expect((await page('?limit=2')).json().has_more).toBe(true)
    expect(await ids(`?starting_after=${references[0]}&limit=1`)).toEqual([references[1]])
    expect(await ids(`?ending_before=${references[2]}`)).toEqual(references.slice(0, 2))
    const foreign = await page(`?starting_after=${theirs}`)
    expect(foreign.statusCode).toBe(400)
    expect(foreign.json().type).toMatch(/cursor-not-found$/)
  })
})

describe('a deployment from before GET /v1/payouts', () => {
  it('when migration 0022 runs on books that hold payouts, then each account’s share of each is a payout, in the order posted', async () => {
    const user = await suite.context.newAccount()
    await user.post('/v1/charges', chargeBody({ amount_cents: 2_200 }))
    const paid = await payOut()
    await control(`/payouts/${paid.reference}/paid`)
    await user.post('/v1/charges', chargeBody({ amount_cents: 3_300 }))
    const failed = await payOut()
    await control(`/payouts/${failed.reference}/failed`)
    const listed = async () => (await user.get('/v1/payouts')).json().data as Payout[]
    const before = await listed()
    expect(before.map((payout) => [payout.id, payout.status])).toEqual([
      [failed.reference, 'failed'],
      [paid.reference, 'paid'],
    ])
    // Every account's payouts as they were before the table existed, then made again by the migration.
    const all = await sql`select account_id, id, amount_cents, currency, status from payouts order by seq`
    await sql`drop table payouts`
    await sql`delete from schema_migrations where name = '0022_payouts.sql'`
    expect(await migrate(suite.context.databaseUrl)).toEqual(['0022_payouts.sql'])
    expect(await sql`select account_id, id, amount_cents, currency, status from payouts order by seq`).toEqual(all)
    expect(await listed()).toEqual(
      before.map((payout) => ({ ...payout, arrival_date: null, failure_code: null, created_at: expect.any(String) })),
    )
  })
})

describe('the payout report', () => {
  it('when payouts reconcile, then they show no difference; each difference planted is named, recorded once, and printed as JSON and CSV', async () => {
    const user = await suite.context.newAccount()
    const charge = (await user.post('/v1/charges', chargeBody({ amount_cents: 3_000 }))).json()
    const fee = feeOf(3_000)
    const planted: ProcessorEvent = {
      id: 'evt_planted',
      type: 'payout.paid',
      createdAt: new Date(),
      changes: [
        {
          object: 'payout',
          reference: 'po_planted',
          status: 'paid',
          // One cent more than it carries.
          amountCents: 3_000 - fee - 5 + 100 + 1,
          currency: 'usd',
          carried: [
            // The processor kept five cents more than the books' pricing says.
            {
              reference: 'txn_fee_differs',
              type: 'charge',
              paymentReference: 'pi_planted',
              chargeId: charge.id,
              amountCents: 3_000,
              feeCents: fee + 5,
              netCents: 3_000 - fee - 5,
            },
            // A payment this service did not make.
            { reference: 'txn_not_ours', type: 'charge', amountCents: 100, feeCents: 0, netCents: 100 },
          ],
        },
      ],
    }
    expect(await acceptEvent(sql, planted, 'webhook', LATER_SETTINGS)).toBe('applied')

    const lines = await payoutReport(sql, new Date(Date.now() - DAY))
    const byPayout = new Map(lines.map((line) => [line.payout, line]))
    const simulated = lines.filter((line) => line.payout.startsWith('sim_po_'))
    expect(simulated.length).toBeGreaterThanOrEqual(3)
    for (const line of simulated) {
      expect(line.differences, line.payout).toEqual([])
      expect(line.fee_differences).toEqual([])
      expect(line.total_cents).toBe(line.amount_cents)
      const { charges_cents, refunds_cents, disputes_cents, payout_failures_cents, fees_cents } = line
      expect(charges_cents + refunds_cents + disputes_cents + payout_failures_cents - fees_cents).toBe(line.total_cents)
    }
    expect(byPayout.get('po_waits')?.differences).toEqual([
      'charge txn_unknown (970) is not in the books yet',
      'the books paid out 0 of its 970',
    ])
    const line = byPayout.get('po_planted')!
    expect(line).toMatchObject({ status: 'paid', charges_cents: 3_000, fees_cents: fee, total_cents: 3_000 - fee })
    expect(line.difference_cents).toBe(100 - 5 + 1)
    expect(line.differences).toEqual([
      `it carries ${3_000 - fee - 5 + 100}, and pays out ${3_000 - fee - 5 + 101}`,
      'charge txn_not_ours (100) is not of a payment this service made',
      `the books paid out ${3_000 - fee} of its ${3_000 - fee - 5 + 101}`,
    ])
    const [txn] = await transactionsOf(user, `&source=${charge.id}`)
    expect(line.fee_differences).toEqual([
      {
        id: txn!.id,
        account_id: user.id,
        detail: `charge txn_fee_differs (${3_000 - fee - 5}): the books' fee is ${fee}, the processor's ${fee + 5}`,
      },
    ])

    const log = pino({ level: 'silent' })
    const compared = await comparePayouts(sql, log, { settleMarginMs: 0 })
    // po_untold too: a payout whose processor never told what it carries is itself a difference.
    expect(compared.found).toBe(4)
    expect((await comparePayouts(sql, log, { settleMarginMs: 0 })).found).toBe(0)
    const open = await sql<{ kind: string; reference: string }[]>`
      select kind, reference from reconciliation_discrepancies where resolved_at is null order by kind, reference`
    expect(open).toEqual([
      { kind: 'fee_differs', reference: txn!.id },
      { kind: 'payout_differs', reference: 'po_planted' },
      { kind: 'payout_differs', reference: 'po_untold' },
      { kind: 'payout_differs', reference: 'po_waits' },
    ])

    const env = { DATABASE_URL: suite.context.databaseUrl }
    const json = await runNpmScript(['reconcile:report', '--', '--payouts', '--days', '1'], env)
    expect(json.code, json.stderr).toBe(0)
    expect(JSON.parse(json.stdout)).toEqual(JSON.parse(JSON.stringify({ payouts: lines })))
    const csv = await runNpmScript(['reconcile:report', '--', '--payouts', '--csv'], env)
    expect(csv.code, csv.stderr).toBe(0)
    const [header, ...rows] = csv.stdout.trimEnd().split('\r\n')
    expect(header).toBe(
      'payout,status,currency,amount_cents,charges_cents,refunds_cents,disputes_cents,payout_failures_cents,' +
        'fees_cents,total_cents,difference_cents,differences',
    )
    expect(rows).toHaveLength(lines.length)
    expect(rows.find((row) => row.startsWith('po_planted,'))).toBe(
      `po_planted,paid,usd,${line.amount_cents},3000,0,0,0,${fee},${3_000 - fee},96,"${[
        ...line.differences,
        line.fee_differences[0]!.detail,
      ]
        .join('; ')
        .replaceAll('"', '""')}"`,
    )
  }, 120_000)
})
