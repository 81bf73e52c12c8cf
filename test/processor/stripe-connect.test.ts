// Stripe Connect through the service (issue 52, items 1, 2 and 4): two accounts linked to connected accounts and one
// that is not, against the Stripe test server. Every call made for a linked account is made on its connected account
// (charges, captures, voids, refunds, the recovery worker's lookups); Connect's webhooks and each connected account's
// list of events change only the books of the account linked to it; what a connected account tells of another
// account's charge, or a connected account linked to nobody, changes nothing.
import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { beforeAll, describe, expect, it } from 'vitest'
import { linkProcessorAccount } from '../../src/accounts/api-keys.js'
import { compareWithProcessor } from '../../src/processor-events/compare.js'
import { payoutReport } from '../../src/processor-events/payout-report.js'
import { pullEvents } from '../../src/processor-events/reconcile.js'
import { createStripeClient } from '../../src/processor/stripe/client.js'
import { chargeBody, type TestAccount, useTestApp } from '../helpers/app.js'
import { expectBalanceOfStripe } from '../helpers/balances.js'
import { STRIPE_CONNECT_WEBHOOK_SECRET, STRIPE_WEBHOOK_SECRET, useProcessor } from '../helpers/processors.js'
import type { StripeTestServer } from '../helpers/stripe/server.js'
import { recoverNow } from '../helpers/tasks.js'

const MANDATE = { ip_address: '203.0.113.7', user_agent: 'Mozilla/5.0 (test)' }
const silent = pino({ level: 'silent' })

const processor = useProcessor('stripe')
const suite = useTestApp({ processor: processor.factory })
let server: StripeTestServer
/** Accounts A and B, each linked to its connected account; the suite's own account stays on the platform's. */
let a: TestAccount
let b: TestAccount
let acctA: string
let acctB: string
/** The payment on acct_B whose metadata names A's charge (forged below). */
let forgedPayment: string

beforeAll(async () => {
  server = processor.stripe()
  ;[acctA, acctB] = [server.connect.create(), server.connect.create()]
  ;[a, b] = [await suite.context.newAccount('A'), await suite.context.newAccount('B')]
  await linkProcessorAccount(suite.context.sql, a.id, acctA)
  await linkProcessorAccount(suite.context.sql, b.id, acctB)
  const url = await suite.context.app.listen({ port: 0, host: '127.0.0.1' })
  server.webhooks.endpoint(`${url}/processor/webhooks`, STRIPE_WEBHOOK_SECRET)
  server.connect.webhooks.endpoint(`${url}/processor/webhooks`, STRIPE_CONNECT_WEBHOOK_SECRET)
})

const charged = async (account: TestAccount, body = chargeBody()) => {
  const response = await account.post('/v1/charges', body)
  expect(response.statusCode, response.body).toBe(201)
  return response.json() as { id: string; processor_reference: string; status: string }
}
const statusOf = async (account: TestAccount, id: string) => (await account.get(`/v1/charges/${id}`)).json().status
const delivered = async () => {
  await Promise.all([server.webhooks.idle(), server.connect.webhooks.idle()])
}
/** A card payment made directly on a connected account by whoever holds it, with the metadata it chooses. */
const paidAt = (processorAccount: string, metadata: Record<string, string>) =>
  createStripeClient(
    { secretKey: server.secretKey, apiUrl: server.url, timeoutMs: 5000 },
    processorAccount,
  ).paymentIntents.create({
    amount: 2500,
    currency: 'usd',
    payment_method: 'pm_card_visa',
    confirm: true,
    automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    metadata,
  })
const inboxRow = async (id: string) =>
  (
    await suite.context.sql<{ status: string; note: string | null; processor_account: string | null }[]>`
      select status, note, processor_account from processor_events where id = ${id}`
  )[0]

describe('direct charges: each call on the connected account the charge was made on', () => {
  it('when a linked account charges, authorizes, captures, voids and refunds, then every call is on its connected account, and the unlinked account’s on the platform’s', async () => {
    const paid = await charged(a)
    const held = await charged(a, chargeBody({ capture: false }))
    const dropped = await charged(a, chargeBody({ capture: false }))
    expect((await a.post(`/v1/charges/${held.id}/capture`, { amount_cents: 2000 })).statusCode).toBe(200)
    expect((await a.post(`/v1/charges/${dropped.id}/void`, {})).statusCode).toBe(200)
    expect((await a.post(`/v1/charges/${paid.id}/refunds`, { amount_cents: 700 })).statusCode).toBe(201)
    const platform = await charged(suite.account)

    const atA = server.connect.ledger(acctA)
    for (const each of [paid, held, dropped]) {
      expect(atA.paymentIntent(each.processor_reference)?.metadata.account_id).toBe(a.id)
      expect(server.ledger.paymentIntent(each.processor_reference)).toBeUndefined()
    }
    expect(atA.movements.map((movement) => movement.kind).sort()).toEqual(
      ['authorization', 'authorization', 'capture', 'charge', 'refund', 'void'].sort(),
    )
    expect([...atA.refunds.values()].map((refund) => refund.amount)).toEqual([700])
    expect(server.ledger.paymentIntent(platform.processor_reference)).toBeDefined()
    expect(server.connect.ledger(acctB).movements).toEqual([])
    // Every request Stripe saw for A's charges named acct_A; none for the platform's charge did.
    const keyed = server.requests.filter((request) => request.method === 'POST' && request.idempotencyKey)
    // Six operations (an SDK retry of one sends its key again): each on acct_A.
    const onA = new Set(keyed.filter((request) => request.account === acctA).map((request) => request.idempotencyKey))
    expect(onA.size).toBe(6)
    expect(keyed.filter((request) => request.account === undefined).length).toBeGreaterThanOrEqual(1)
  })

  it('when every answer to a linked account’s charge is lost, then 503, and the recovery worker settles it on that connected account', async () => {
    server.fault({ method: 'POST', path: /^\/v1\/payment_intents$/ }, { kind: 'drop-after' }, 3)
    const key = randomUUID()
    const lost = await b.post('/v1/charges', chargeBody(), { key })
    expect(lost.statusCode).toBe(503)
    // The link changes meanwhile: the lost answer is still asked for where the call went.
    await linkProcessorAccount(suite.context.sql, b.id, null)
    try {
      const run = await recoverNow(suite.context)
      expect(run.settled).toBeGreaterThanOrEqual(1)
    } finally {
      await linkProcessorAccount(suite.context.sql, b.id, acctB)
    }
    const replay = await b.post('/v1/charges', chargeBody(), { key })
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    const reference = replay.json().processor_reference
    const atB = server.connect.ledger(acctB)
    expect(atB.movements.filter((movement) => movement.object === reference).map((each) => each.kind)).toEqual([
      'charge',
    ])
    expect(
      server.requests.filter((request) => request.account === undefined && request.path.includes(reference)),
    ).toEqual([])
  })

  it('when an account sends another account’s charge id, then 404, and nothing moves on either connected account', async () => {
    const bs = await charged(b)
    const before = server.connect.ledger(acctB).movements.length
    for (const path of ['capture', 'void', 'refunds']) {
      const response = await a.post(`/v1/charges/${bs.id}/${path}`, {})
      expect(response.statusCode, path).toBe(404)
    }
    expect((await a.get(`/v1/charges/${bs.id}`)).statusCode).toBe(404)
    expect(server.connect.ledger(acctB).movements.length).toBe(before)
    expect(server.connect.ledger(acctA).movements.filter((each) => each.object === bs.processor_reference)).toEqual([])
  })
})

describe('Connect webhooks and each connected account’s list of events', () => {
  const debit = () => chargeBody({ source: 'pm_usBankAccount_success', mandate: MANDATE })
  /** The bank debit settles on the connected account, and none of Connect's webhooks of it arrive. */
  const settledUntold = async (processorAccount: string, reference: string) => {
    server.connect.webhooks.fault(/./, 'drop', Number.POSITIVE_INFINITY)
    try {
      server.connect.later(processorAccount).settle(reference)
      await delivered()
    } finally {
      server.connect.webhooks.clearFaults()
    }
  }

  it('when a linked account’s bank debit settles, then Connect’s event (naming the connected account) is applied to its charge, once however often it comes', async () => {
    const pending = await charged(a, debit())
    expect(pending.status).toBe('processing')
    server.connect.webhooks.fault(/^payment_intent\.succeeded$/, 'duplicate', 1)
    server.connect.later(acctA).settle(pending.processor_reference)
    await delivered()
    expect(await statusOf(a, pending.id)).toBe('succeeded')
    const event = server.connect
      .ledger(acctA)
      .events.all.filter((each) => each.type === 'payment_intent.succeeded')
      .at(-1)!
    expect(event.account).toBe(acctA)
    expect(await inboxRow(event.id)).toMatchObject({ status: 'applied', processor_account: acctA })
    const succeeded = await suite.context.sql`
      select 1 from events where account_id = ${a.id} and type = 'charge.succeeded' and
        body::jsonb->'data'->'object'->>'id' = ${pending.id}`
    expect(succeeded.length).toBe(1)
  })

  it('when a connected account tells of another account’s charge (its metadata copied), then it is recorded and ignored, and that charge is untouched', async () => {
    const victim = await charged(a)
    // Whoever holds acct_B writes metadata as it likes: a payment there that names A's charge, then refunded.
    const forged = await paidAt(acctB, { charge_id: victim.id, account_id: a.id })
    forgedPayment = forged.id
    server.connect.later(acctB).refundFromDashboard(forged.id, 2500)
    await delivered()
    const told = server.connect
      .ledger(acctB)
      .events.all.filter((each) => each.type === 'refund.created' || each.type === 'charge.refunded')
    expect(told.length).toBeGreaterThan(0)
    for (const event of told) {
      expect(await inboxRow(event.id)).toMatchObject({
        status: 'ignored',
        processor_account: acctB,
        note: expect.stringContaining(`was made on ${acctA}, not on ${acctB}`),
      })
    }
    const charge = (await a.get(`/v1/charges/${victim.id}`)).json()
    expect(charge).toMatchObject({ status: 'succeeded', amount_refunded_cents: 0 })
    expect((await a.get(`/v1/charges/${victim.id}/refunds`)).json().data).toEqual([])
  })

  it('when a connected account that no account is linked to sends an event, then it is acknowledged and recorded, never applied', async () => {
    const stranger = server.connect.create()
    const mine = await charged(a)
    await paidAt(stranger, { charge_id: mine.id })
    await delivered()
    const event = server.connect.ledger(stranger).events.all.at(-1)!
    expect(server.connect.webhooks.deliveries.filter((each) => each.event === event.id)).toEqual([
      expect.objectContaining({ status: 200 }),
    ])
    expect(await inboxRow(event.id)).toEqual({
      status: 'ignored',
      note: `${stranger} is linked to no account`,
      processor_account: stranger,
    })
  })

  it('when Connect’s webhooks are lost, then the reconciliation reads each linked connected account’s list and applies them; the comparison finds every account’s charges where they are', async () => {
    const pending = await charged(b, debit())
    await settledUntold(acctB, pending.processor_reference)
    expect(await statusOf(b, pending.id)).toBe('processing')
    const pulled = await pullEvents(
      suite.context.sql,
      suite.context.processor.later,
      suite.context.chargeSettings,
      silent,
    )
    expect(pulled.fresh).toBeGreaterThanOrEqual(1)
    expect(await statusOf(b, pending.id)).toBe('succeeded')
    const cursors = await suite.context.sql<{ processor_account: string }[]>`
      select processor_account from reconciliation_cursors where processor = 'stripe' order by processor_account`
    expect(cursors.map((row) => row.processor_account)).toEqual(['', acctA, acctB].sort())

    const comparison = await compareWithProcessor(suite.context.sql, suite.context.processor.later, silent, {
      settleMarginMs: 0,
    })
    // The one thing that differs is the forged refund on acct_B (above): not in the books, and said so.
    expect(comparison).toMatchObject({ found: 1, open: 1 })
    const open = await suite.context.sql<{ kind: string; detail: string }[]>`
      select kind, detail from reconciliation_discrepancies where resolved_at is null`
    expect(open).toEqual([
      {
        kind: 'refund_not_in_books',
        detail: expect.stringContaining(`of payment ${forgedPayment} is not in the books`),
      },
    ])
  })

  it('when one linked connected account cannot be read (its access revoked), then the others are read all the same, and the run fails naming it', async () => {
    const revoked = await suite.context.newAccount('Revoked')
    // Sorted before acct_B's, so that it is read first.
    await linkProcessorAccount(suite.context.sql, revoked.id, 'acct_0000RevokedAccess')
    try {
      const pending = await charged(b, debit())
      await settledUntold(acctB, pending.processor_reference)
      await expect(
        pullEvents(suite.context.sql, suite.context.processor.later, suite.context.chargeSettings, silent),
      ).rejects.toThrow('the events of acct_0000RevokedAccess at stripe could not be read')
      expect(await statusOf(b, pending.id)).toBe('succeeded')
      // The comparison cannot skip it (its charges would look missing): it fails, naming it.
      await expect(
        compareWithProcessor(suite.context.sql, suite.context.processor.later, silent, { settleMarginMs: 0 }),
      ).rejects.toThrow('the payments of acct_0000RevokedAccess at stripe could not be read')
    } finally {
      await linkProcessorAccount(suite.context.sql, revoked.id, null)
    }
  })
})

describe('balances and payouts per connected account (issue 52 item 5)', () => {
  const DAY = 86_400_000
  it('when a linked account charges, refunds, loses a dispute and is paid out, then its balance and its payout mirror its connected account at Stripe, to the cent', async () => {
    const account = await suite.context.newAccount('Mirrored')
    const acct = server.connect.create()
    await linkProcessorAccount(suite.context.sql, account.id, acct)
    const atStripe = createStripeClient({ secretKey: server.secretKey, apiUrl: server.url, timeoutMs: 5000 }, acct)
    const later = server.connect.later(acct)
    const mirrors = () => expectBalanceOfStripe(account, atStripe)

    await charged(account, chargeBody({ amount_cents: 10_000 }))
    const refunded = await charged(account, chargeBody({ amount_cents: 5_000 }))
    expect((await account.post(`/v1/charges/${refunded.id}/refunds`, { amount_cents: 2_000 })).statusCode).toBe(201)
    const disputed = await charged(account, chargeBody({ amount_cents: 3_000 }))
    later.dispute(disputed.processor_reference)
    later.closeDispute(disputed.processor_reference, 'lost')
    await delivered()
    await mirrors()

    const payout = later.payOut({ availableBy: new Date(Date.now() + 3 * DAY) })
    expect(payout, 'a payout of something').toBeDefined()
    await delivered()
    later.settlePayout(payout!.id, 'paid')
    await delivered()
    await mirrors()
    const line = (await payoutReport(suite.context.sql, new Date(Date.now() - DAY))).find(
      (each) => each.payout === payout!.id,
    )
    expect(line).toMatchObject({ differences: [], fee_differences: [], difference_cents: 0 })
    const share = (await account.get(`/v1/payouts/${payout!.id}`)).json()
    expect(share).toMatchObject({ amount_cents: payout!.amount, status: 'paid' })
    // Nobody else's books carry it.
    for (const other of [a, b, suite.account])
      expect((await other.get(`/v1/payouts/${payout!.id}`)).statusCode).toBe(404)
  })
})
