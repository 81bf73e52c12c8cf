// The platform's fee on Stripe Connect's direct charges (issue 52, item 3): a linked account's charges carry the
// application fee of its platform pricing, captures set it again for what they capture, refunds give it back when
// asked; the merchant's books post Stripe's fee and the platform's as fee parts, as Stripe's balance transactions show
// them, and the platform's own books post each fee and each given back. Both are held to the Stripe test server's
// records: the connected account's balance, and the platform's application fees.
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { linkProcessorAccount } from '../../src/accounts/api-keys.js'
import { setPlatformPrice } from '../../src/accounts/platform-pricing.js'
import { comparePlatformFees, platformFeeTotals } from '../../src/ledger/platform-fees.js'
import { createStripeClient } from '../../src/processor/stripe/client.js'
import { chargeBody, type TestAccount, useTestApp } from '../helpers/app.js'
import { expectBalanceOfStripe } from '../helpers/balances.js'
import { STRIPE_CONNECT_WEBHOOK_SECRET, STRIPE_WEBHOOK_SECRET, useProcessor } from '../helpers/processors.js'
import type { StripeTestServer } from '../helpers/stripe/server.js'
import { recoverNow } from '../helpers/tasks.js'

const processor = useProcessor('stripe')
const suite = useTestApp({ processor: processor.factory })
let server: StripeTestServer

beforeAll(async () => {
  server = processor.stripe()
  const url = await suite.context.app.listen({ port: 0, host: '127.0.0.1' })
  server.webhooks.endpoint(`${url}/processor/webhooks`, STRIPE_WEBHOOK_SECRET)
  server.connect.webhooks.endpoint(`${url}/processor/webhooks`, STRIPE_CONNECT_WEBHOOK_SECRET)
})

/** 1% + 20 cents in usd; nothing in other currencies. */
const ONE_PERCENT_AND_20 = { percentBasisPoints: 100, fixedAmount: 20 }

/** A new account linked to a new connected account, with the platform's price in usd (before its first request). */
async function linkedAccount(name: string, price = ONE_PERCENT_AND_20) {
  const account = await suite.context.newAccount(name)
  const acct = server.connect.create()
  await linkProcessorAccount(suite.context.sql, account.id, acct)
  await setPlatformPrice(suite.context.sql, account.id, 'usd', price)
  return {
    account,
    acct,
    stripe: createStripeClient({ secretKey: server.secretKey, apiUrl: server.url, timeoutMs: 5000 }, acct),
  }
}

const charged = async (account: TestAccount, body = chargeBody()) => {
  const response = await account.post('/v1/charges', body)
  expect(response.statusCode, response.body).toBe(201)
  return response.json() as { id: string; processor_reference: string; status: string }
}

/** The account's balance transactions of one source, as the API shows them. */
async function transactionsOf(account: TestAccount, source: string) {
  const listed = (await account.get('/v1/balance_transactions?limit=100')).json() as {
    data: {
      type: string
      source: string
      amount_cents: number
      fee_cents: number
      net_cents: number
      fee_details: { type: string; amount_cents: number }[]
    }[]
  }
  return listed.data.filter((txn) => txn.source === source)
}

/** The platform's application fees at Stripe, by charge: what it collected and what it gave back. */
const feesAtStripe = () =>
  [...server.ledger.applicationFees.values()].map((fee) => ({
    account: fee.account,
    amount: fee.amount,
    refunded: fee.amount_refunded,
  }))

const platformBooks = async (accountId: string) =>
  (await platformFeeTotals(suite.context.sql)).filter((line) => line.account_id === accountId)

describe('the platform’s fee on a linked account’s charges', () => {
  it('when a linked account with a price charges, then Stripe takes the fee, the merchant’s books show it beside Stripe’s and the platform’s books post it', async () => {
    const { account, acct } = await linkedAccount('Priced')
    const charge = await charged(account, chargeBody({ amount_cents: 10_000 }))

    const intent = server.connect.ledger(acct).paymentIntent(charge.processor_reference)!
    expect(intent.application_fee_amount).toBe(120)
    expect(feesAtStripe().filter((fee) => fee.account === acct)).toEqual([{ account: acct, amount: 120, refunded: 0 }])
    // Stripe's fee (2.9% + 30 = 320) and the platform's (120), as Stripe's balance transaction shows them.
    const [txn] = await transactionsOf(account, charge.id)
    expect(txn).toMatchObject({ type: 'charge', amount_cents: 10_000, fee_cents: 440, net_cents: 9_560 })
    expect(txn!.fee_details.map((part) => [part.type, part.amount_cents])).toEqual([
      ['processor_fee', 320],
      ['application_fee', 120],
    ])
    const entries = await suite.context.sql<{ ledger_account: string; amount_cents: string }[]>`
      select e.ledger_account, e.amount_cents from ledger_entries e join ledger_transactions t
        on t.account_id = e.account_id and t.id = e.transaction_id
      where t.account_id = ${account.id} and t.source = ${charge.id} order by e.entry`
    expect(entries.map((entry) => [entry.ledger_account, Number(entry.amount_cents)])).toEqual([
      ['balance', 9_560],
      ['processor_fees', 320],
      ['platform_fees', 120],
      ['processor', -10_000],
    ])
    expect(await platformBooks(account.id)).toEqual([
      { account_id: account.id, currency: 'usd', collected_cents: 120, refunded_cents: 0, net_cents: 120, fees: 1 },
    ])
  })

  it('when an authorization is captured in part, then the fee is set again for what is captured', async () => {
    const { account, acct } = await linkedAccount('Captured in part')
    const held = await charged(account, chargeBody({ amount_cents: 10_000, capture: false }))
    expect(server.connect.ledger(acct).paymentIntent(held.processor_reference)!.application_fee_amount).toBe(120)
    expect((await account.post(`/v1/charges/${held.id}/capture`, { amount_cents: 5_000 })).statusCode).toBe(200)

    expect(feesAtStripe().filter((fee) => fee.account === acct)).toEqual([{ account: acct, amount: 70, refunded: 0 }])
    const [txn] = await transactionsOf(account, held.id)
    expect(txn!.fee_details.find((part) => part.type === 'application_fee')?.amount_cents).toBe(70)
    expect((await platformBooks(account.id))[0]).toMatchObject({ collected_cents: 70, net_cents: 70 })
  })

  it('when refunds ask for the fee back, then it comes back in proportion, and all that is left on the last; a refund that does not ask keeps it', async () => {
    const { account, acct, stripe } = await linkedAccount('Refunded')
    const charge = await charged(account, chargeBody({ amount_cents: 10_000 }))
    const refund = async (body: object) => {
      const response = await account.post(`/v1/charges/${charge.id}/refunds`, body)
      expect(response.statusCode, response.body).toBe(201)
      return response.json() as { id: string }
    }
    const kept = await refund({ amount_cents: 1_000 })
    const inPart = await refund({ amount_cents: 2_500, refund_application_fee: true })
    const rest = await refund({ refund_application_fee: true })

    // 120 collected; none back with the first, 30 (a quarter) with the second, the 90 left with the last.
    expect(feesAtStripe().filter((fee) => fee.account === acct)).toEqual([
      { account: acct, amount: 120, refunded: 120 },
    ])
    const feeBack = async (id: string) => (await transactionsOf(account, id))[0]
    expect(await feeBack(kept.id)).toMatchObject({ amount_cents: -1_000, fee_cents: 0, net_cents: -1_000 })
    expect(await feeBack(inPart.id)).toMatchObject({ amount_cents: -2_500, fee_cents: -30, net_cents: -2_470 })
    expect(await feeBack(rest.id)).toMatchObject({ amount_cents: -6_500, fee_cents: -90, net_cents: -6_410 })
    expect((await feeBack(rest.id))!.fee_details.map((part) => [part.type, part.amount_cents])).toEqual([
      ['application_fee', -90],
    ])
    expect(await platformBooks(account.id)).toEqual([
      { account_id: account.id, currency: 'usd', collected_cents: 120, refunded_cents: 120, net_cents: 0, fees: 1 },
    ])
    // The merchant's balance is its connected account's at Stripe, to the cent.
    await expectBalanceOfStripe(account, stripe)
  })

  it('when a refund made in the Dashboard gives the fee back, then the books learn what it gave from its balance transaction', async () => {
    const { account, acct, stripe } = await linkedAccount('Refunded in the Dashboard')
    const charge = await charged(account, chargeBody({ amount_cents: 10_000 }))
    const refund = server.connect.later(acct).refundFromDashboard(charge.processor_reference, 5_000, true)
    await Promise.all([server.webhooks.idle(), server.connect.webhooks.idle()])

    const [row] = await suite.context.sql<{ id: string }[]>`
      select id from refunds where account_id = ${account.id} and processor_reference = ${refund.id}`
    expect(row, 'the refund recorded from its event').toBeDefined()
    expect((await transactionsOf(account, row!.id))[0]).toMatchObject({
      amount_cents: -5_000,
      fee_cents: -60,
      net_cents: -4_940,
    })
    expect(feesAtStripe().filter((fee) => fee.account === acct)).toEqual([{ account: acct, amount: 120, refunded: 60 }])
    expect((await platformBooks(account.id))[0]).toMatchObject({ collected_cents: 120, refunded_cents: 60 })
    await expectBalanceOfStripe(account, stripe)
  })

  it('when a bank debit settles later, its event doubled, then the fee Stripe took is read with the capture and posted once in both books', async () => {
    const { account, acct } = await linkedAccount('Debited')
    const debit = chargeBody({
      amount_cents: 10_000,
      source: 'pm_usBankAccount_success',
      mandate: { ip_address: '203.0.113.7', user_agent: 'Mozilla/5.0 (test)' },
    })
    const pending = await charged(account, debit)
    expect(pending.status).toBe('processing')
    server.connect.webhooks.fault(/^payment_intent\.succeeded$/, 'duplicate', 1)
    server.connect.later(acct).settle(pending.processor_reference)
    await Promise.all([server.webhooks.idle(), server.connect.webhooks.idle()])

    const [txn] = await transactionsOf(account, pending.id)
    expect(txn!.fee_details.find((part) => part.type === 'application_fee')?.amount_cents).toBe(120)
    expect(await platformBooks(account.id)).toEqual([
      { account_id: account.id, currency: 'usd', collected_cents: 120, refunded_cents: 0, net_cents: 120, fees: 1 },
    ])
  })

  it('when the account is not linked, or the currency has no price, then no fee is asked', async () => {
    const unlinked = await suite.context.newAccount('Unlinked, priced')
    await setPlatformPrice(suite.context.sql, unlinked.id, 'usd', ONE_PERCENT_AND_20)
    const onPlatform = await charged(unlinked, chargeBody({ amount_cents: 10_000 }))
    expect(server.ledger.paymentIntent(onPlatform.processor_reference)!.application_fee_amount).toBeNull()

    const { account, acct } = await linkedAccount('Priced in usd only')
    const inEuros = await charged(account, chargeBody({ amount_cents: 10_000, currency: 'eur' }))
    expect(server.connect.ledger(acct).paymentIntent(inEuros.processor_reference)!.application_fee_amount).toBeNull()
    expect(await platformBooks(unlinked.id)).toEqual([])
    expect(await platformBooks(account.id)).toEqual([])
  })

  it('when a charge’s answer is lost and the price changes before the recovery worker settles it, then the fee first sent is the fee Stripe took and the books post', async () => {
    const { account, acct } = await linkedAccount('Repriced')
    server.fault({ method: 'POST', path: /^\/v1\/payment_intents$/ }, { kind: 'drop-after' }, 3)
    const key = randomUUID()
    expect((await account.post('/v1/charges', chargeBody({ amount_cents: 10_000 }), { key })).statusCode).toBe(503)
    await setPlatformPrice(suite.context.sql, account.id, 'usd', { percentBasisPoints: 500, fixedAmount: 0 })

    expect((await recoverNow(suite.context)).settled).toBeGreaterThanOrEqual(1)
    const replay = await account.post('/v1/charges', chargeBody({ amount_cents: 10_000 }), { key })
    expect(replay.statusCode).toBe(201)
    const intent = server.connect.ledger(acct).paymentIntent(replay.json().processor_reference)!
    expect(intent.application_fee_amount).toBe(120)
    expect(feesAtStripe().filter((fee) => fee.account === acct)).toEqual([{ account: acct, amount: 120, refunded: 0 }])
    expect((await platformBooks(account.id))[0]).toMatchObject({ collected_cents: 120 })
  })

  it('when the platform’s books are held against Stripe’s application fees, then they agree, connected account by account, to the cent; a fee the books lost is named', async () => {
    const later = suite.context.processor.later
    const lines = await comparePlatformFees(suite.context.sql, await later.platformFees!())
    const atStripe = new Set(feesAtStripe().map((fee) => fee.account))
    expect(atStripe.size).toBeGreaterThanOrEqual(5)
    expect(lines.map((line) => line.processor_account).sort()).toEqual([...atStripe].sort())
    expect(lines.filter((line) => !line.agrees)).toEqual([])
    for (const line of lines) expect(line.difference_cents).toBe(0)

    const { account, acct } = await linkedAccount('Lost by the books')
    await charged(account, chargeBody({ amount_cents: 10_000 }))
    await suite.context.sql`delete from platform_fees where account_id = ${account.id}`
    const after = await comparePlatformFees(suite.context.sql, await later.platformFees!())
    expect(after.filter((line) => !line.agrees)).toEqual([
      {
        processor_account: acct,
        account_id: null,
        currency: 'usd',
        books: { collected_cents: 0, refunded_cents: 0 },
        processor: { collected_cents: 120, refunded_cents: 0 },
        difference_cents: 120,
        agrees: false,
      },
    ])
  })
})

describe('the Stripe test server’s application fees', () => {
  it('when the platform asks a fee on its own account, then Stripe refuses it: only a direct or destination charge pays one', async () => {
    const platform = createStripeClient({ secretKey: server.secretKey, apiUrl: server.url, timeoutMs: 5000 }, null)
    await expect(
      platform.paymentIntents.create({
        amount: 1_000,
        currency: 'usd',
        payment_method: 'pm_card_visa',
        application_fee_amount: 100,
        automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
        confirm: true,
      }),
    ).rejects.toMatchObject({ type: 'StripeInvalidRequestError', param: 'application_fee_amount' })
  })
})
