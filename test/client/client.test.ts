/// <reference types="vite/client" />
// The shipped client against the real server over real sockets: every /v1 operation of openapi.yaml is reachable
// through it, answers come back typed, errors are ProblemErrors by type, lists iterate, webhooks verify.
import { readFileSync } from 'node:fs'
import { Webhook } from 'standardwebhooks'
import { beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import {
  createClient,
  idempotencyKey,
  ProblemError,
  verifyWebhook,
  WebhookVerificationError,
  type PaymentsClient,
} from 'payments-api/client'
import { chargeBody, countCharges, useTestApp } from '../helpers/app.js'
import type { ClientExercise } from './exercises/exercise.js'

// A charge's money is available at once: a fork's resource that spends the balance (docs/extending.md's payouts)
// is funded by a charge, with no clock to move.
const suite = useTestApp({ config: { WEBHOOK_ALLOW_PRIVATE_URLS: true, FUNDS_AVAILABLE_AFTER_DAYS: 0 } })
let api: string
const reached: { method: string; path: string }[] = []

beforeAll(async () => {
  api = await suite.context.app.listen({ port: 0, host: '127.0.0.1' })
})

/** A client for a new account, whose requests are recorded (method and path) on their way out. */
async function newClient(): Promise<{ client: PaymentsClient; accountId: string }> {
  const user = await suite.context.newAccount()
  const recordingFetch: typeof fetch = (input, init) => {
    reached.push({ method: init?.method ?? 'GET', path: new URL(String(input)).pathname })
    return fetch(input, init)
  }
  return { client: createClient({ baseUrl: api, apiKey: user.apiKey, fetch: recordingFetch }), accountId: user.id }
}

async function rejection(call: Promise<unknown>): Promise<ProblemError> {
  const error = await call.then(
    () => undefined,
    (error: unknown) => error,
  )
  if (!(error instanceof ProblemError)) throw new Error(`expected a ProblemError, got ${String(error)}`)
  return error
}

describe('the client', () => {
  it('when every resource is used through it, then every API operation in openapi.yaml has been called, with typed answers', async () => {
    const { client, accountId } = await newClient()
    expect((await client.health.live()).data).toEqual({ status: 'ok' })
    expect((await client.health.ready()).data).toEqual({ status: 'ok' })
    const endpoint = await client.webhookEndpoints.create({ url: 'http://127.0.0.1:9/hooks', enabled_events: ['*'] })
    expect(endpoint.data.secret).toMatch(/^whsec_/)
    expect((await client.webhookEndpoints.retrieve(endpoint.data.id)).data.id).toBe(endpoint.data.id)
    expect((await client.webhookEndpoints.list()).data.data.map((item) => item.id)).toEqual([endpoint.data.id])
    expect((await client.webhookEndpoints.update(endpoint.data.id, { description: 'orders' })).data.description).toBe(
      'orders',
    )
    const rotated = await client.webhookEndpoints.rotateSecret(endpoint.data.id)
    expect(rotated.data.secret).not.toBe(endpoint.data.secret)

    const charge = await client.charges.create(chargeBody({ amount_cents: 3000 }), { idempotencyKey: 'order-77' })
    expect(charge).toMatchObject({
      status: 201,
      replayed: false,
      attempts: 1,
      idempotencyKey: 'order-77',
      data: { status: 'succeeded', amount_cents: 3000 },
    })
    expect(charge.requestId).toEqual(expect.any(String))
    expect((await client.charges.retrieve(charge.data.id)).data).toEqual(charge.data)
    expect((await client.charges.findByIdempotencyKey('order-77'))?.id).toBe(charge.data.id)
    expect(await client.charges.findByIdempotencyKey('order-78')).toBeUndefined()

    const refund = await client.refunds.create(charge.data.id, { amount_cents: 1000 })
    expect(refund.data).toMatchObject({ object: 'refund', charge: charge.data.id, amount_cents: 1000 })
    expect((await client.refunds.retrieve(refund.data.id)).data).toEqual(refund.data)
    expect((await client.refunds.list()).data.data.map((item) => item.id)).toEqual([refund.data.id])
    expect((await client.charges.listRefunds(charge.data.id)).data.data.map((item) => item.id)).toEqual([
      refund.data.id,
    ])

    const authorized = await client.charges.create(chargeBody({ amount_cents: 5000, capture: false }))
    const captured = await client.charges.capture(authorized.data.id, { amount_cents: 4000 })
    expect(captured.data).toMatchObject({ status: 'succeeded', captured: true, amount_captured_cents: 4000 })
    const toVoid = await client.charges.create(chargeBody({ capture: false }))
    expect((await client.charges.void(toVoid.data.id)).data.status).toBe('voided')
    expect((await client.charges.list({ limit: 2 })).data).toMatchObject({
      has_more: true,
      data: [{ id: toVoid.data.id }, { id: authorized.data.id }],
    })

    const events = await client.events.list({ type: 'charge.refunded' })
    expect(events.data.data).toHaveLength(1)
    const event = (await client.events.retrieve(events.data.data[0]!.id)).data
    // The type says what the data holds: narrowed on it, refund is there.
    expect(event.type === 'charge.refunded' && event.data.refund?.id).toBe(refund.data.id)
    // The charge captured 3000 and the refund took 1000 back; the captures above are posted too.
    const refundTransactions = await client.balanceTransactions.list({ type: 'refund' })
    expect(refundTransactions.data.data.map((txn) => [txn.source, txn.net_cents])).toEqual([[refund.data.id, -1000]])
    const [posted] = refundTransactions.data.data
    expect((await client.balanceTransactions.retrieve(posted!.id)).data).toEqual(posted)
    // Available at once here (FUNDS_AVAILABLE_AFTER_DAYS 0): the balance is every transaction's net.
    const balance = (await client.balance.retrieve()).data
    const nets = (await client.balanceTransactions.list({ limit: 100 })).data.data.map((txn) => txn.net_cents)
    expect(nets).toHaveLength(3)
    expect(balance.available).toEqual([{ amount_cents: nets.reduce((sum, net) => sum + net, 0), currency: 'usd' }])
    expect(balance.pending).toEqual([{ amount_cents: 0, currency: 'usd' }])
    // The processor pays it out (the simulated processor's control stands for its schedule): this account's share.
    const paidOut = await fetch(`${api}/simulated-processor/payouts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ available_by: new Date().toISOString() }),
    })
    expect(paidOut.status, await paidOut.text()).toBe(200)
    const [payout] = (await client.payouts.list({ status: 'in_transit' })).data.data
    expect(payout).toMatchObject({ object: 'payout', amount_cents: balance.available[0]!.amount_cents })
    expect((await client.payouts.retrieve(payout!.id)).data).toEqual(payout)
    const redelivered = await client.events.redeliver(event.id, { endpoint_id: endpoint.data.id })
    expect(redelivered.status).toBe(202)
    const deliveries = await client.webhookEndpoints.deliveries(endpoint.data.id, { limit: 100 })
    expect(deliveries.data.data.length).toBeGreaterThan(0)
    expect((await client.webhookEndpoints.delete(endpoint.data.id)).data).toEqual({
      id: endpoint.data.id,
      object: 'webhook_endpoint',
      deleted: true,
    })

    // A fork's resources, through their own exercises (test/client/exercises/).
    for (const module of Object.values(
      import.meta.glob<{ exercise?: ClientExercise }>('./exercises/*.ts', { eager: true }),
    )) {
      await module.exercise?.(client, { sql: suite.context.sql, accountId })
    }

    const spec = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as {
      paths: Record<string, Record<string, unknown>>
    }
    const operations = Object.entries(spec.paths)
      // The document itself, and the processor's webhook: not the API a client calls.
      .filter(([path]) => !['/openapi.yaml', '/openapi.json', '/docs', '/processor/webhooks'].includes(path))
      .flatMap(([path, methods]) =>
        Object.keys(methods)
          .filter((method) => method !== 'parameters')
          .map((method) => ({ method: method.toUpperCase(), path })),
      )
    const notReached = operations.filter(({ method, path }) => {
      const pattern = new RegExp(`^${path.replace(/\{\w+\}/g, '[^/]+')}$`)
      return !reached.some((request) => request.method === method && pattern.test(request.path))
    })
    expect(notReached).toEqual([])
  })

  it('when all pages are iterated, then every item comes once, newest first, a page at a time', async () => {
    const { client, accountId } = await newClient()
    const created: string[] = []
    for (let n = 0; n < 5; n++)
      created.unshift((await client.charges.create(chargeBody({ amount_cents: 100 + n }))).data.id)
    reached.length = 0
    const seen: string[] = []
    for await (const charge of client.charges.all({ limit: 2 })) seen.push(charge.id)
    expect(seen).toEqual(created)
    expect(reached.filter((request) => request.path === '/v1/charges')).toHaveLength(3)
    expect(await countCharges(suite.context.sql, accountId)).toBe(5)
  })

  it('when the API refuses, then the error is a ProblemError by type, with the problem, the status and the request id, and is not retried', async () => {
    const { client, accountId } = await newClient()
    const declined = await rejection(client.charges.create(chargeBody({ source: 'pm_card_chargeDeclined' })))
    expect(declined.is('card-declined')).toBe(true)
    expect(declined).toMatchObject({
      status: 402,
      type: 'card-declined',
      attempts: 1,
      problem: { status: 402, detail: expect.any(String) },
    })
    expect(declined.requestId).toEqual(expect.any(String))

    await client.charges.create(chargeBody(), { idempotencyKey: 'order-9' })
    const reused = await rejection(
      client.charges.create(chargeBody({ amount_cents: 1 }), { idempotencyKey: 'order-9' }),
    )
    expect(reused).toMatchObject({
      status: 422,
      type: 'idempotency-key-reused',
      attempts: 1,
      idempotencyKey: 'order-9',
    })

    const missing = await rejection(client.charges.retrieve(`ch_${'0'.repeat(24)}`))
    expect(missing).toMatchObject({ status: 404, type: 'resource-not-found', attempts: 1 })
    const invalid = await rejection(client.charges.create({ ...chargeBody(), amount_cents: -5 }))
    expect(invalid).toMatchObject({ status: 400, type: 'validation-failed', attempts: 1 })
    const unauthorized = await rejection(createClient({ baseUrl: api, apiKey: 'sk_test_nope' }).charges.list())
    expect(unauthorized).toMatchObject({ status: 401, type: 'unauthorized', attempts: 1 })
    const notCapturable = await rejection(client.charges.capture((await client.charges.create(chargeBody())).data.id))
    expect(notCapturable).toMatchObject({ status: 409, type: 'charge-not-capturable', attempts: 1 })
    expect(await countCharges(suite.context.sql, accountId)).toBe(3) // the decline, order-9, and the captured one
  })

  it('when a key begins with a double quote, then it goes as a structured-field string and the server reads it back unchanged', async () => {
    const { client } = await newClient()
    const key = '"quoted" key \\ 1'
    const charge = await client.charges.create(chargeBody(), { idempotencyKey: key })
    expect((await client.charges.create(chargeBody(), { idempotencyKey: key })).replayed).toBe(true)
    expect((await client.charges.findByIdempotencyKey(key))?.id).toBe(charge.data.id)
  })

  it('when a key is not one the server accepts, then the call throws before anything is sent', async () => {
    const { client } = await newClient()
    reached.length = 0
    await expect(client.charges.create(chargeBody(), { idempotencyKey: 'caf\u00e9' })).rejects.toThrow(TypeError)
    await expect(client.charges.create(chargeBody(), { idempotencyKey: 'x'.repeat(256) })).rejects.toThrow(
      /at most 255/,
    )
    expect(() => idempotencyKey.derive('invoice', 'x'.repeat(250))).toThrow(/at most 255/)
    expect(reached).toEqual([])
  })
})

describe('verifyWebhook', () => {
  it('when a delivery is signed with the endpoint secret, then it gives the event; when its body or signature is changed, then it throws', async () => {
    const { client } = await newClient()
    const endpoint = await client.webhookEndpoints.create({ url: 'http://127.0.0.1:9/hooks', enabled_events: ['*'] })
    await client.charges.create(chargeBody())
    const [event] = (await client.events.list()).data.data
    const body = JSON.stringify(event)
    const headers = { 'webhook-id': event!.id, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) }
    const signature = new Webhook(endpoint.data.secret!).sign(event!.id, new Date(), body)

    expect(verifyWebhook(body, { ...headers, 'webhook-signature': signature }, endpoint.data.secret!)).toEqual(event)
    expect(
      verifyWebhook(
        Buffer.from(body),
        new Headers({ ...headers, 'webhook-signature': `v1,bm9wZQ== ${signature}` }),
        endpoint.data.secret!,
      ),
    ).toEqual(event)
    expect(() =>
      verifyWebhook(
        body.replace('"succeeded"', '"failed"'),
        { ...headers, 'webhook-signature': signature },
        endpoint.data.secret!,
      ),
    ).toThrow(WebhookVerificationError)
    const rotated = await client.webhookEndpoints.rotateSecret(endpoint.data.id)
    expect(() => verifyWebhook(body, { ...headers, 'webhook-signature': signature }, rotated.data.secret!)).toThrow(
      WebhookVerificationError,
    )
  })
})
