// The service as users run it with PROCESSOR=stripe: a process of its own (API and worker), its SDK pointed at the
// Stripe-compatible test server by STRIPE_API_URL. Charges, declines, refusals, refunds, and a lost answer nobody
// retries, settled by the worker; every answer checked against openapi.yaml from outside; at the end Stripe's books
// equal the service's, and every money-moving call was keyed.
import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createAccount } from '../../src/accounts/api-keys.js'
import { contractFetch } from '../helpers/contract.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { startServer, type ServerProcess } from '../helpers/processes.js'
import { startStripeServer, type StripeTestServer } from '../helpers/processors.js'
import { until } from '../helpers/system.js'

let database: TestDatabase
let stripe: StripeTestServer
let service: ServerProcess
let apiKey: string
let accountId: string

beforeAll(async () => {
  ;[database, stripe] = await Promise.all([createTestDatabase(), startStripeServer()])
  ;({ api_key: apiKey, account_id: accountId } = await createAccount(database.sql, 'Stripe service'))
  service = await startServer({
    DATABASE_URL: database.url,
    PROCESSOR: 'stripe',
    STRIPE_SECRET_KEY: stripe.secretKey,
    STRIPE_API_URL: stripe.url,
    PROCESSOR_TIMEOUT_MS: '2500',
    RECOVERY_GRACE_SECONDS: '3',
  })
})
afterAll(async () => {
  service?.child.kill('SIGKILL')
  await Promise.all([stripe?.close(), database?.drop()])
})

const violations: string[] = []
afterEach(() => {
  stripe.clearFaults()
  expect(violations.splice(0)).toEqual([])
})

const post = (path: string, body: unknown, key: string = randomUUID()) =>
  contractFetch(violations)(`${service.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  })
const charge = (source: string, key?: string) =>
  post('/v1/charges', { amount_cents: 2500, currency: 'usd', source }, key)
const CREATE = { method: 'POST', path: /^\/v1\/payment_intents$/ }

describe('the service with PROCESSOR=stripe', () => {
  it('when it starts, then it says which processor it uses', () => {
    expect(service.output()).toContain(`processor: Stripe at ${stripe.url}`)
  })

  it('when a card is charged, then the charge is the PaymentIntent Stripe made, with the account in its metadata', async () => {
    const response = await charge('pm_card_visa')
    expect(response.status).toBe(201)
    const body = (await response.json()) as { id: string; processor_reference: string }
    const intent = stripe.ledger.paymentIntent(body.processor_reference)
    expect(intent).toMatchObject({ status: 'succeeded', amount_received: 2500, metadata: { account_id: accountId } })
  })

  it('when a card is declined, then 402 with Stripe’s decline code and message, and the charge names the PaymentIntent', async () => {
    const response = await charge('pm_card_chargeDeclinedInsufficientFunds')
    expect(response.status).toBe(402)
    const problem = (await response.json()) as { decline_code: string; detail: string; charge: string }
    expect(problem).toMatchObject({ decline_code: 'insufficient_funds', detail: 'Your card has insufficient funds.' })
    const [row] = await database.sql`select status, processor_reference from charges where id = ${problem.charge}`
    expect(row).toMatchObject({ status: 'failed', processor_reference: expect.stringMatching(/^pi_/) })
  })

  it('when the payment method is unknown to Stripe, then 422 naming source, nothing is recorded, and the key can carry a corrected request', async () => {
    const key = randomUUID()
    const refused = await charge('pm_card_nonexistent', key)
    expect(refused.status).toBe(422)
    expect(await refused.json()).toMatchObject({
      type: expect.stringMatching(/\/processor-refused$/),
      param: 'source',
      processor_code: 'resource_missing',
    })
    expect((await charge('pm_card_visa', key)).status).toBe(201)
  })

  it('when a charge is refunded in part, then Stripe holds the refund under the operation id', async () => {
    const charged = (await (await charge('pm_card_visa')).json()) as { id: string; processor_reference: string }
    const key = randomUUID()
    const refund = await post(`/v1/charges/${charged.id}/refunds`, { amount_cents: 700 }, key)
    expect(refund.status).toBe(201)
    const refunds = [...stripe.ledger.refunds.values()].filter(
      (each) => each.payment_intent === charged.processor_reference,
    )
    expect(refunds.map((each) => each.amount)).toEqual([700])
    expect(
      stripe.requests.find(
        (request) =>
          request.path === '/v1/refunds' && request.method === 'POST' && request.idempotencyKey !== undefined,
      ),
    ).toBeDefined()
  })

  it('when every answer to a charge is lost and nobody retries, then 503, and the worker records the charge Stripe made', async () => {
    stripe.fault(CREATE, { kind: 'drop-after' }, 3)
    const key = randomUUID()
    const lost = await charge('pm_card_visa', key)
    expect(lost.status).toBe(503)
    expect(lost.headers.get('retry-after')).not.toBeNull()
    await until(
      async () =>
        (await database.sql`select 1 from idempotency_keys where key = ${key} and completed_at is not null`).length ===
        1,
      30_000,
    )
    const [claim] = await database.sql<
      { operation_id: string }[]
    >`select operation_id from idempotency_keys where key = ${key}`
    const operationId = claim!.operation_id
    const moved = stripe.ledger.movements.filter((movement) => movement.idempotencyKey === operationId)
    expect(moved).toHaveLength(1)
    const [row] =
      await database.sql`select processor_reference from charges where processor_reference = ${moved[0]!.object}`
    expect(row).toBeDefined()
    const replay = await charge('pm_card_visa', key)
    expect(replay.status).toBe(201)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
  })

  it('when Stripe fails every attempt with a 500, then 503, and the worker finds Stripe never charged and frees the key', async () => {
    stripe.fault(CREATE, { kind: 'error', status: 500 }, 3)
    const key = randomUUID()
    expect((await charge('pm_card_visa', key)).status).toBe(503)
    await until(
      async () => (await database.sql`select 1 from idempotency_keys where key = ${key}`).length === 0,
      30_000,
    )
    const retry = await charge('pm_card_visa', key)
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBeNull()
  })

  it('at the end, Stripe’s books equal the service’s: every charge and refund at Stripe is recorded once, and every money-moving call was keyed', async () => {
    const [books] = await database.sql<{ charged: number; refunded: number }[]>`
      select coalesce(sum(amount_captured_cents), 0)::int as charged, coalesce(sum(amount_refunded_cents), 0)::int as
        refunded
      from charges where account_id = ${accountId}`
    const received = [...stripe.ledger.paymentIntents.values()]
      .filter((intent) => intent.metadata.account_id === accountId)
      .reduce((sum, intent) => sum + intent.amount_received, 0)
    const refunded = [...stripe.ledger.refunds.values()].reduce((sum, refund) => sum + refund.amount, 0)
    expect(books).toEqual({ charged: received, refunded })
    expect(stripe.posts().filter((request) => request.idempotencyKey === undefined)).toEqual([])
  })
})
