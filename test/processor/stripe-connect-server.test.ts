// The offline Stripe server plays Connect (test/helpers/stripe/connect.ts), through the official SDK as the service
// will reach it: connected accounts made with POST /v1/accounts, each with objects, money, idempotency keys and
// events of its own, reached with Stripe-Account; an account the platform cannot reach refused naming it; a connected
// account's events naming it, sent to Connect's endpoint and not to the platform's.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomUUID } from 'node:crypto'
import Stripe from 'stripe'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createStripeClient } from '../../src/processor/stripe/client.js'
import { startStripeServer, type StripeTestServer } from '../helpers/processors.js'

let server: StripeTestServer
let stripe: Stripe
beforeAll(async () => {
  server = await startStripeServer({ searchLagMs: 60_000 })
  stripe = createStripeClient({ secretKey: server.secretKey, apiUrl: server.url, timeoutMs: 5000 })
})
afterAll(() => server.close())

const intent = { amount: 2500, currency: 'usd', payment_method: 'pm_card_visa', confirm: true }
const params = { ...intent, automatic_payment_methods: { enabled: true, allow_redirects: 'never' as const } }

/** A webhook endpoint on loopback that keeps what it is sent. */
async function receiver(): Promise<{
  url: string
  events: { body: Stripe.Event; signature: string }[]
  server: Server
}> {
  const events: { body: Stripe.Event; signature: string }[] = []
  const listening = createServer((request, response) => {
    let text = ''
    request.on('data', (chunk) => (text += chunk))
    request.on('end', () => {
      events.push({ body: JSON.parse(text), signature: String(request.headers['stripe-signature']) })
      response.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}`, events, server: listening }
}

describe('the Stripe test server plays Connect', () => {
  it('when a PaymentIntent is made with Stripe-Account, then it and its money are that account’s only', async () => {
    const account = await stripe.accounts.create({ type: 'custom', country: 'US' })
    expect(account.id).toMatch(/^acct_/)
    expect((await stripe.accounts.retrieve(account.id)).charges_enabled).toBe(true)
    const made = await stripe.paymentIntents.create(params, { stripeAccount: account.id })
    expect(made.status).toBe('succeeded')
    expect((await stripe.paymentIntents.retrieve(made.id, {}, { stripeAccount: account.id })).id).toBe(made.id)
    const onPlatform = await stripe.paymentIntents.retrieve(made.id).catch((error: unknown) => error)
    expect(onPlatform).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError)
    expect((onPlatform as Stripe.errors.StripeError).code).toBe('resource_missing')
    const theirs = await stripe.balanceTransactions.list({ limit: 100 }, { stripeAccount: account.id })
    expect(theirs.data.map((transaction) => transaction.amount)).toEqual([2500])
    const platforms = await stripe.balanceTransactions.list({ limit: 100 })
    expect(platforms.data.some((transaction) => transaction.source === made.latest_charge)).toBe(false)
    const reads = server.requests.filter(
      (each) => each.method === 'GET' && each.path === `/v1/payment_intents/${made.id}`,
    )
    expect(reads.map((each) => each.account)).toEqual([account.id, undefined])
  })

  it('when Stripe-Account names an account the platform cannot reach, then the request is refused naming it, and nothing is made', async () => {
    const before = server.ledger.paymentIntents.size
    const refused = await stripe.paymentIntents
      .create(params, { stripeAccount: 'acct_1NoSuchAccount000000000' })
      .catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(Stripe.errors.StripePermissionError)
    expect(refused).toMatchObject({ statusCode: 403, code: 'account_invalid' })
    expect((refused as Error).message).toContain("account 'acct_1NoSuchAccount000000000'")
    expect(server.ledger.paymentIntents.size).toBe(before)
  })

  it('when one idempotency key is used on the platform and on a connected account, then each is its own, and a retry replays its own', async () => {
    const account = server.connect.create()
    const key = randomUUID()
    const platform = await stripe.paymentIntents.create(params, { idempotencyKey: key })
    const connected = await stripe.paymentIntents.create(params, { idempotencyKey: key, stripeAccount: account })
    expect(connected.id).not.toBe(platform.id)
    const again = await stripe.paymentIntents.create(params, { idempotencyKey: key, stripeAccount: account })
    expect(again.id).toBe(connected.id)
    expect(again.lastResponse.headers['idempotent-replayed']).toBe('true')
    expect(server.connect.ledger(account).movements.filter((movement) => movement.idempotencyKey === key)).toHaveLength(
      1,
    )
  })

  it('when something happens on a connected account, then its event names the account and goes to Connect’s endpoint only', async () => {
    const platform = await receiver()
    const connect = await receiver()
    server.webhooks.endpoint(platform.url, 'whsec_platform')
    server.connect.webhooks.endpoint(connect.url, 'whsec_connect')
    try {
      const account = server.connect.create()
      const made = await stripe.paymentIntents.create(params, { stripeAccount: account })
      server.connect.later(account).dispute(made.id)
      await server.connect.webhooks.idle()
      await server.webhooks.idle()
      const types = connect.events.map((each) => each.body.type)
      expect(types).toEqual(expect.arrayContaining(['payment_intent.succeeded', 'charge.dispute.created']))
      expect(connect.events.every((each) => each.body.account === account)).toBe(true)
      expect(platform.events.filter((each) => each.body.account === account)).toEqual([])
      // Signed with Connect's endpoint's secret, as the SDK verifies it.
      const first = connect.events[0]!
      const verified = stripe.webhooks.constructEvent(
        JSON.stringify(first.body, null, 2),
        first.signature,
        'whsec_connect',
      )
      expect(verified.account).toBe(account)
      // The account's events list is its own.
      const listed = await stripe.events.list({ limit: 100 }, { stripeAccount: account })
      expect(listed.data.map((event) => event.id)).toEqual(
        expect.arrayContaining(connect.events.map((each) => each.body.id)),
      )
      expect((await stripe.events.list({ limit: 100 })).data.some((event) => event.account === account)).toBe(false)
    } finally {
      platform.server.close()
      connect.server.close()
    }
  })
})
