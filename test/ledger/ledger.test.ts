// The ledger through the API (docs/ledger.md): each movement of money posts one balance transaction with balanced
// entries, in the transaction that moves it, and only then; the balance is what the entries sum to, pending until
// available_on; and the database refuses a transaction that does not balance, or any edit of what is posted.
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { postRefund } from '../../src/ledger/postings.js'
import { registry } from '../../src/observability/metrics.js'
import type { BalanceTransaction } from '../../src/schemas/balance.js'
import { chargeBody, type TestAccount, useTestApp } from '../helpers/app.js'
import { laterAt, type LaterAtProcessor } from '../helpers/at-processor.js'
import { useProcessor } from '../helpers/processors.js'

const DAY = 86_400_000
/** How far the books' clock runs ahead of the system's: moved to see funds become available. */
let ahead = 0
const processor = useProcessor('simulated')
const suite = useTestApp({ processor: processor.factory, clock: () => new Date(Date.now() + ahead) })
let later: LaterAtProcessor
beforeAll(async () => {
  later = await laterAt('simulated', suite.context, processor)
})

/** 2.9% (rounded half up) + 30, the default pricing. */
const feeOf = (amountCents: number) => Math.round(amountCents * 0.029) + 30

async function transactionsOf(account: TestAccount, query = ''): Promise<BalanceTransaction[]> {
  return (await account.get(`/v1/balance_transactions?limit=100${query}`)).json().data
}

/** Every entry of the account, summed per ledger account: what the books hold. */
async function ledgerOf(accountId: string) {
  const rows = await suite.context.sql<{ ledger_account: string; total: string }[]>`
    select ledger_account, sum(amount_cents) as total from ledger_entries where account_id = ${accountId}
    group by ledger_account order by ledger_account`
  return Object.fromEntries(rows.map((row) => [row.ledger_account, Number(row.total)]))
}

describe('balance transactions', () => {
  it('when a charge is captured at once, then it is one balance transaction of its amount less the fee, pending for two days', async () => {
    const user = await suite.context.newAccount()
    const charge = (await user.post('/v1/charges', chargeBody())).json()
    const [txn, ...rest] = (await transactionsOf(user)) as [BalanceTransaction, ...BalanceTransaction[]]
    expect(rest).toEqual([])
    expect(txn).toMatchObject({
      object: 'balance_transaction',
      type: 'charge',
      source: charge.id,
      amount_cents: 2500,
      fee_cents: feeOf(2500),
      fee_details: [{ type: 'processor_fee', amount_cents: feeOf(2500), currency: 'usd', description: '2.9% + 30' }],
      net_cents: 2500 - feeOf(2500),
      currency: 'usd',
      status: 'pending',
      payout: null,
    })
    expect(Date.parse(txn.available_on) - Date.parse(txn.created_at)).toBe(2 * DAY)
    expect((await user.get(`/v1/balance_transactions/${txn.id}`)).json()).toEqual(txn)
    expect((await user.get('/v1/balance')).json()).toEqual({
      object: 'balance',
      available: [{ amount_cents: 0, currency: 'usd' }],
      pending: [{ amount_cents: 2500 - feeOf(2500), currency: 'usd' }],
    })
    expect(await ledgerOf(user.id)).toEqual({
      balance: 2500 - feeOf(2500),
      processor: -2500,
      processor_fees: feeOf(2500),
    })
  })

  it('when the clock passes available_on, then the net is available', async () => {
    const user = await suite.context.newAccount()
    await user.post('/v1/charges', chargeBody({ amount_cents: 10_000 }))
    const [txn] = (await transactionsOf(user)) as [BalanceTransaction]
    ahead = Date.parse(txn.available_on) - Date.now() + 1
    try {
      expect((await user.get('/v1/balance')).json()).toMatchObject({
        available: [{ amount_cents: 10_000 - feeOf(10_000), currency: 'usd' }],
        pending: [{ amount_cents: 0, currency: 'usd' }],
      })
      expect((await user.get(`/v1/balance_transactions/${txn.id}`)).json().status).toBe('available')
    } finally {
      ahead = 0
    }
  })

  it('when a charge is declined, or only authorized, or its request replayed, then nothing is posted; a capture posts what it captured', async () => {
    const user = await suite.context.newAccount()
    expect((await user.post('/v1/charges', chargeBody({ source: 'pm_card_chargeDeclined' }))).statusCode).toBe(402)
    const key = randomUUID()
    const authorized = (await user.post('/v1/charges', chargeBody({ capture: false }), { key })).json()
    expect(authorized.status).toBe('requires_capture')
    const replay = await user.post('/v1/charges', chargeBody({ capture: false }), { key })
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(await transactionsOf(user)).toEqual([])

    const captureKey = randomUUID()
    const capture = () => user.post(`/v1/charges/${authorized.id}/capture`, { amount_cents: 2000 }, { key: captureKey })
    expect((await capture()).statusCode).toBe(200)
    expect((await capture()).headers['idempotent-replayed']).toBe('true')
    const posted = await transactionsOf(user)
    expect(posted).toHaveLength(1)
    expect(posted[0]).toMatchObject({
      type: 'charge',
      source: authorized.id,
      amount_cents: 2000,
      fee_cents: feeOf(2000),
    })
  })

  it('when a charge is captured at the processor later (the customer authenticated), then it is posted then, once', async () => {
    const user = await suite.context.newAccount()
    const body = chargeBody({
      source: 'pm_card_authenticationRequired',
      return_url: 'https://shop.example/orders/1042/paid',
    })
    const charge = (await user.post('/v1/charges', body)).json()
    expect(charge.status).toBe('requires_action')
    expect(await transactionsOf(user)).toEqual([])
    await later.authenticate(charge.next_action.url, true)
    await later.delivered()
    expect((await transactionsOf(user)).map((txn) => [txn.type, txn.source, txn.amount_cents])).toEqual([
      ['charge', charge.id, 2500],
    ])
  })

  it('when a charge is refunded, then the refund is one transaction of minus its amount, available at once, and the fee stays', async () => {
    const user = await suite.context.newAccount()
    const charge = (await user.post('/v1/charges', chargeBody())).json()
    const refund = (await user.post(`/v1/charges/${charge.id}/refunds`, { amount_cents: 1000 })).json()
    expect(refund.status).toBe('succeeded')
    const refunds = await transactionsOf(user, '&type=refund')
    expect(refunds).toEqual([
      expect.objectContaining({
        type: 'refund',
        source: refund.id,
        amount_cents: -1000,
        fee_cents: 0,
        net_cents: -1000,
      }),
    ])
    expect(refunds[0]!.available_on).toBe(refunds[0]!.created_at)
    expect((await user.get('/v1/balance')).json()).toMatchObject({
      available: [{ amount_cents: -1000, currency: 'usd' }],
      pending: [{ amount_cents: 2500 - feeOf(2500), currency: 'usd' }],
    })
    expect(await ledgerOf(user.id)).toEqual({
      balance: 1500 - feeOf(2500),
      processor: -1500,
      processor_fees: feeOf(2500),
    })
  })

  it('when a refund fails after it was made, then its amount comes back, once', async () => {
    const user = await suite.context.newAccount()
    const charge = (await user.post('/v1/charges', chargeBody({ source: 'pm_card_refundFail' }))).json()
    const refund = (await user.post(`/v1/charges/${charge.id}/refunds`, {})).json()
    await later.delivered()
    await later.delivered()
    expect((await user.get(`/v1/refunds/${refund.id}`)).json().status).toBe('failed')
    const types = (await transactionsOf(user)).map((txn) => [txn.type, txn.amount_cents])
    expect(types).toEqual([
      ['refund_failure', 2500],
      ['refund', -2500],
      ['charge', 2500],
    ])
    expect((await ledgerOf(user.id)).balance).toBe(2500 - feeOf(2500))
  })

  it('when a dispute is lost, then its amount and fee are withdrawn; when one is won, then the amount comes back and the fee stays', async () => {
    const user = await suite.context.newAccount()
    const lost = (await user.post('/v1/charges', chargeBody({ source: 'pm_card_createDispute' }))).json()
    const won = (await user.post('/v1/charges', chargeBody({ source: 'pm_card_createDispute' }))).json()
    await later.delivered()
    await later.closeDispute(lost.processor_reference, 'lost')
    await later.closeDispute(won.processor_reference, 'won')
    await later.delivered()
    const dispute = (id: string) => transactionsOf(user, `&source=${(id as string).replace(/[^A-Za-z0-9_]/g, '')}`)
    const lostDispute = (await user.get(`/v1/charges/${lost.id}`)).json().dispute.processor_reference
    const wonDispute = (await user.get(`/v1/charges/${won.id}`)).json().dispute.processor_reference
    expect((await dispute(lostDispute)).map((txn) => [txn.type, txn.amount_cents, txn.fee_cents])).toEqual([
      ['dispute', -2500, 1500],
    ])
    expect((await dispute(wonDispute)).map((txn) => [txn.type, txn.amount_cents, txn.fee_cents])).toEqual([
      ['dispute_reversal', 2500, 0],
      ['dispute', -2500, 1500],
    ])
    const fees = 2 * feeOf(2500) + 2 * 1500
    expect(await ledgerOf(user.id)).toEqual({ balance: 2500 - fees, processor: -2500, processor_fees: fees })
  })

  it('when a dispute takes more than is available, then it posts all the same, and its event and a metric say the balance is below zero', async () => {
    const overdrawn = async () =>
      Number(
        /cause="dispute"} (\d+)/.exec(await registry.getSingleMetricAsString('ledger_balances_overdrawn_total'))?.[1] ??
          0,
      )
    const before = await overdrawn()
    const user = await suite.context.newAccount()
    await user.post('/v1/charges', chargeBody({ source: 'pm_card_createDispute' }))
    await later.delivered()
    // The charge's net is pending for two days; the dispute's amount and fee leave the available balance at once.
    expect((await user.get('/v1/balance')).json()).toMatchObject({
      available: [{ amount_cents: -2500 - 1500, currency: 'usd' }],
      pending: [{ amount_cents: 2500 - feeOf(2500), currency: 'usd' }],
    })
    const notes = await suite.context.sql<{ note: string }[]>`
      select note from processor_events where status = 'applied' and note like ${`%account ${user.id}'s usd%`}`
    expect(notes.map((row) => row.note)).toEqual([
      expect.stringMatching(/^dispute \S+ left account .* balance at -4000$/),
    ])
    expect(await overdrawn()).toBe(before + 1)
  })

  it('when balance transactions are listed, then they page newest first and filter by type and source', async () => {
    const user = await suite.context.newAccount()
    const charges = []
    for (let i = 0; i < 3; i++)
      charges.push((await user.post('/v1/charges', chargeBody({ amount_cents: 1000 + i }))).json())
    const first = (await user.get('/v1/balance_transactions?limit=2')).json()
    expect(first.has_more).toBe(true)
    expect(first.data.map((txn: { source: string }) => txn.source)).toEqual([charges[2].id, charges[1].id])
    const second = (await user.get(`/v1/balance_transactions?limit=2&starting_after=${first.data[1].id}`)).json()
    expect(second).toMatchObject({ has_more: false, data: [{ source: charges[0].id }] })
    expect(await transactionsOf(user, `&source=${charges[1].id}`)).toEqual([first.data[1]])
    expect(await transactionsOf(user, '&type=refund')).toEqual([])
    const other = await suite.context.newAccount()
    expect((await other.get(`/v1/balance_transactions/${first.data[0].id}`)).statusCode).toBe(404)
    expect((await other.get(`/v1/balance_transactions?starting_after=${first.data[0].id}`)).statusCode).toBe(400)
  })
})

describe('what the database holds the ledger to', () => {
  const postUnbalanced = (accountId: string, entries: [string, number][]) =>
    suite.context.sql`
      insert into ledger_transactions (account_id, id, type, source, posting, amount_cents, fee_cents, net_cents,
        currency, available_on, entry_accounts, entry_cents)
      values (${accountId}, ${`txn_${randomUUID().replaceAll('-', '').slice(0, 24)}`}, 'charge', 'ch_x',
        ${randomUUID()}, 100, 0, 100, 'usd', now(), ${entries.map(([account]) => account)}::text[],
        ${entries.map(([, cents]) => cents)}::bigint[])`

  it('when a transaction does not balance, its balance entries differ from its net, or an entry is of no ledger account or nothing, then it is refused', async () => {
    const user = await suite.context.newAccount()
    await expect(
      postUnbalanced(user.id, [
        ['balance', 100],
        ['processor', -99],
      ]),
    ).rejects.toMatchObject({ code: 'LG001' })
    await expect(
      postUnbalanced(user.id, [
        ['balance', 90],
        ['processor_fees', 10],
        ['processor', -100],
      ]),
    ).rejects.toMatchObject({
      code: 'LG001',
    })
    await expect(postUnbalanced(user.id, [])).rejects.toMatchObject({ code: 'LG001' })
    await expect(postUnbalanced(user.id, [['balance', 100]])).rejects.toMatchObject({ code: 'LG001' })
    await expect(
      postUnbalanced(user.id, [
        ['balance', 100],
        ['somewhere', -100],
      ]),
    ).rejects.toMatchObject({ code: 'LG001' })
    await expect(
      postUnbalanced(user.id, [
        ['balance', 100],
        ['processor_fees', 0],
        ['processor', -100],
      ]),
    ).rejects.toMatchObject({ code: 'LG001' })
    await postUnbalanced(user.id, [
      ['balance', 100],
      ['processor', -100],
    ])
    expect(await ledgerOf(user.id)).toEqual({ balance: 100, processor: -100 })
  })

  it('when a cause is told again, then it posts nothing; told with another amount, then the write is refused', async () => {
    const user = await suite.context.newAccount()
    const refund = (amount: number) =>
      suite.context.sql.begin((tx) =>
        postRefund(tx, { account_id: user.id, currency: 'usd', id: 're_told_twice', amount_cents: amount }),
      )
    const postings = async () =>
      (await suite.context.sql`select id from ledger_transactions where account_id = ${user.id}`).length
    await refund(700)
    await refund(700)
    expect(await postings()).toBe(1)
    await expect(refund(800)).rejects.toThrow('refund:re_told_twice was posted as -700, and is now told as -800')
    // Told twice in one transaction (one statement for both, when gathered): the same.
    await expect(
      suite.context.sql.begin(async (tx) => {
        const told = { account_id: user.id, currency: 'usd', id: 're_told_in_one' }
        await Promise.all([
          postRefund(tx, { ...told, amount_cents: 300 }),
          postRefund(tx, { ...told, amount_cents: 400 }),
        ])
      }),
    ).rejects.toThrow('refund:re_told_in_one was posted as -300, and is now told as -400')
    expect(await postings()).toBe(1)
    expect(await ledgerOf(user.id)).toEqual({ balance: -700, processor: 700 })
  })

  it('when what is posted is updated or deleted, then it is refused; only the payout may be set, once', async () => {
    const user = await suite.context.newAccount()
    await user.post('/v1/charges', chargeBody())
    const { sql } = suite.context
    // Entries are in their transaction's row: changing one is changing the transaction.
    await expect(
      sql`update ledger_transactions set entry_cents = entry_cents || 0::bigint where account_id = ${user.id}`,
    ).rejects.toMatchObject({ code: 'LG002' })
    await expect(sql`delete from ledger_transactions where account_id = ${user.id}`).rejects.toMatchObject({
      code: 'LG002',
    })
    await expect(sql`update ledger_entries set amount_cents = 1 where account_id = ${user.id}`).rejects.toThrow()
    await expect(sql`update ledger_transactions set net_cents = 0 where account_id = ${user.id}`).rejects.toMatchObject(
      {
        code: 'LG002',
      },
    )
    await sql`update ledger_transactions set payout = 'po_1' where account_id = ${user.id}`
    await expect(
      sql`update ledger_transactions set payout = 'po_2' where account_id = ${user.id}`,
    ).rejects.toMatchObject({
      code: 'LG002',
    })
  })
})
