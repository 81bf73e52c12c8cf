// The Stripe processor against the Stripe-compatible test server, through the official SDK: what it sends, how
// Stripe's errors become the boundary's, that no attempt reaches Stripe after PROCESSOR_TIMEOUT_MS whatever the
// SDK retries, and that a lost answer is settled from reads that cannot lag.
import { randomUUID } from 'node:crypto'
import type Stripe from 'stripe'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { chargeIdOf } from '../../src/charges/calls.js'
import {
  type ChargeRequest,
  ProcessorIdempotencyError,
  ProcessorRequestError,
  ProcessorUnavailableError,
} from '../../src/processor/processor.js'
import { createStripeClient } from '../../src/processor/stripe/client.js'
import { createStripeProcessor } from '../../src/processor/stripe/stripe.js'
import { startStripeServer, type StripeTestServer } from '../helpers/processors.js'

let server: StripeTestServer
beforeAll(async () => {
  server = await startStripeServer({ searchLagMs: 60_000 })
})
afterAll(() => server.close())
afterEach(() => server.clearFaults())

/** A processor on its own SDK client, whose 'request' events count every attempt the SDK makes. */
function processorWith(timeoutMs = 5000, secretKey = server.secretKey) {
  const stripe: Stripe = createStripeClient({ secretKey, apiUrl: server.url, timeoutMs })
  const attempts: number[] = []
  stripe.on('request', () => attempts.push(Date.now()))
  return { processor: createStripeProcessor({ clients: () => stripe, timeoutMs }), attempts }
}

const chargeRequest = (overrides: Partial<ChargeRequest> = {}): ChargeRequest => {
  const idempotencyKey = overrides.idempotencyKey ?? randomUUID()
  return {
    amountCents: 2500,
    currency: 'usd',
    source: 'pm_card_visa',
    accountId: 'acct_stripe',
    processorAccount: null,
    idempotencyKey,
    chargeId: chargeIdOf(idempotencyKey),
    ...overrides,
  }
}
const received = (key: string) => server.requests.filter((request) => request.idempotencyKey === key)
const moved = (key: string) => server.ledger.movements.filter((movement) => movement.idempotencyKey === key)
const CREATE = { method: 'POST', path: /^\/v1\/payment_intents$/ }

describe('what the Stripe processor sends', () => {
  it('when it charges, authorizes, captures, voids and refunds, then each call carries the operation id as its Idempotency-Key, and in metadata with the account', async () => {
    const { processor } = processorWith()
    const charge = chargeRequest({ description: 'order 1042' })
    const charged = (await processor.charge(charge)) as { processorReference: string }
    expect(received(charge.idempotencyKey)).toHaveLength(1)
    expect(received(charge.idempotencyKey)[0]!.form).toEqual({
      amount: '2500',
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: 'true',
      capture_method: 'automatic',
      automatic_payment_methods: { enabled: 'true', allow_redirects: 'never' },
      description: 'order 1042',
      metadata: { operation_id: charge.idempotencyKey, account_id: 'acct_stripe', charge_id: charge.chargeId },
      expand: ['latest_charge.balance_transaction'],
    })
    // What Stripe kept, from the charge's balance transaction expanded in its answer: 2.9% + 30 cents of 25.00.
    const availableOn = new Date((server.ledger.paymentIntent(charged.processorReference)!.created + 2 * 86_400) * 1000)
    expect(charged).toMatchObject({
      funds: {
        fees: [{ amountCents: 103, description: 'Stripe processing fees' }],
        availableOn: availableOn.toISOString(),
      },
    })

    const held = chargeRequest()
    const authorized = (await processor.authorize(held)) as { processorReference: string }
    expect(received(held.idempotencyKey)[0]!.form).toMatchObject({ capture_method: 'manual', confirm: 'true' })
    // Nothing captured, nothing kept yet.
    expect(authorized).not.toHaveProperty('funds')
    const capture = {
      chargeReference: authorized.processorReference,
      amountCents: 1000,
      accountId: 'acct_stripe',
      processorAccount: null,
      idempotencyKey: randomUUID(),
    }
    const captured = await processor.capture(capture)
    expect(received(capture.idempotencyKey)).toEqual([
      expect.objectContaining({
        path: `/v1/payment_intents/${authorized.processorReference}/capture`,
        form: {
          amount_to_capture: '1000',
          metadata: { capture_operation_id: capture.idempotencyKey },
          expand: ['latest_charge.balance_transaction'],
        },
      }),
    ])
    expect(captured.funds?.fees).toEqual([{ amountCents: 59, description: 'Stripe processing fees' }])
    expect(server.ledger.paymentIntent(authorized.processorReference)).toMatchObject({
      status: 'succeeded',
      amount_received: 1000,
      amount_capturable: 0,
    })

    const other = (await processor.authorize(chargeRequest())) as { processorReference: string }
    const voided = {
      chargeReference: other.processorReference,
      accountId: 'acct_stripe',
      processorAccount: null,
      idempotencyKey: randomUUID(),
    }
    await processor.void(voided)
    expect(received(voided.idempotencyKey)).toEqual([
      expect.objectContaining({ path: `/v1/payment_intents/${other.processorReference}/cancel` }),
    ])

    const refund = {
      chargeReference: charged.processorReference,
      amountCents: 500,
      accountId: 'acct_stripe',
      processorAccount: null,
      idempotencyKey: randomUUID(),
    }
    await processor.refund(refund)
    expect(received(refund.idempotencyKey)[0]!.form).toEqual({
      payment_intent: charged.processorReference,
      amount: '500',
      metadata: { operation_id: refund.idempotencyKey, account_id: 'acct_stripe' },
    })
  })

  it('when the currency has no minor unit, then the amount goes as it is: 1000 jpy is ¥1,000', async () => {
    const { processor } = processorWith()
    const request = chargeRequest({ amountCents: 1000, currency: 'jpy' })
    expect(await processor.charge(request)).toMatchObject({ status: 'succeeded' })
    expect(moved(request.idempotencyKey)).toEqual([expect.objectContaining({ kind: 'charge', amount: 1000 })])
  })
})

describe("Stripe's errors at the boundary", () => {
  it('when the amount is below the currency minimum, then the request is refused naming amount_cents, and nothing moved', async () => {
    const { processor } = processorWith()
    const refusal = await processor.charge(chargeRequest({ amountCents: 30 })).catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(ProcessorRequestError)
    expect(refusal).toMatchObject({ field: 'amount_cents', code: 'amount_too_small' })
  })

  it('when the PaymentIntent is in no state for the operation, then it is refused without a field', async () => {
    const { processor } = processorWith()
    const charged = (await processor.charge(chargeRequest())) as { processorReference: string }
    const refusal = await processor
      .capture({
        chargeReference: charged.processorReference,
        amountCents: 100,
        accountId: 'acct_stripe',
        processorAccount: null,
        idempotencyKey: randomUUID(),
      })
      .catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(ProcessorRequestError)
    expect(refusal).toMatchObject({ field: undefined, code: 'payment_intent_unexpected_state' })
  })

  it('when the operation id comes back with other parameters, then it is an idempotency defect', async () => {
    const { processor } = processorWith()
    const request = chargeRequest()
    await processor.charge(request)
    await expect(processor.charge({ ...request, amountCents: 9900 })).rejects.toBeInstanceOf(ProcessorIdempotencyError)
  })

  it('when the secret key is wrong, then nothing happens and the outcome is unavailable', async () => {
    const { processor } = processorWith(5000, 'sk_test_wrongwrongwrong')
    const request = chargeRequest()
    await expect(processor.charge(request)).rejects.toBeInstanceOf(ProcessorUnavailableError)
    expect(moved(request.idempotencyKey)).toEqual([])
  })

  it('when Stripe answers 500 or 429 on every attempt, then the outcome is unknown, after the SDK retried under the same key', async () => {
    const { processor } = processorWith()
    server.fault(CREATE, { kind: 'error', status: 500 }, 3)
    const request = chargeRequest()
    await expect(processor.charge(request)).rejects.toBeInstanceOf(ProcessorUnavailableError)
    expect(received(request.idempotencyKey).map((each) => each.outcome)).toEqual([500, 500, 500])
    // A 429 is not retried by the SDK unless Stripe asks (Stripe-Should-Retry).
    server.fault(CREATE, { kind: 'error', status: 429 })
    const limited = chargeRequest()
    await expect(processor.charge(limited)).rejects.toBeInstanceOf(ProcessorUnavailableError)
    expect(received(limited.idempotencyKey).map((each) => each.outcome)).toEqual([429])
  })
})

describe('retries and timeouts: nothing reaches Stripe after PROCESSOR_TIMEOUT_MS', () => {
  it('when a connection is reset, then the SDK retries it once, even with time left, under the same key, and money moves once', async () => {
    const { processor } = processorWith()
    server.fault(CREATE, { kind: 'drop-after' })
    const request = chargeRequest()
    expect(await processor.charge(request)).toMatchObject({ status: 'succeeded' })
    expect(received(request.idempotencyKey).map((each) => [each.outcome, each.replayed])).toEqual([
      ['dropped', false],
      [200, true],
    ])
    expect(moved(request.idempotencyKey)).toHaveLength(1)
  })

  it('when the reset comes late in the call, then the SDK’s retry is not sent: one request, within the deadline', async () => {
    const { processor, attempts } = processorWith(300)
    server.fault(CREATE, { kind: 'drop-before' })
    const request = chargeRequest()
    const start = Date.now()
    await expect(processor.charge(request)).rejects.toBeInstanceOf(ProcessorUnavailableError)
    // The SDK tried again (it waits at least half a second first), and each later attempt was refused unsent.
    expect(attempts.length).toBeGreaterThan(1)
    expect(received(request.idempotencyKey)).toHaveLength(1)
    expect(received(request.idempotencyKey)[0]!.receivedAt).toBeLessThan(start + 300)
  })

  it('when Stripe asks for a retry (500, Stripe-Should-Retry) or answers after the timeout, then no later attempt is sent', async () => {
    const { processor, attempts } = processorWith(300)
    server.fault(CREATE, { kind: 'error', status: 500, shouldRetry: true })
    const asked = chargeRequest()
    await expect(processor.charge(asked)).rejects.toBeInstanceOf(ProcessorUnavailableError)
    expect(received(asked.idempotencyKey)).toHaveLength(1)

    server.fault(CREATE, { kind: 'delay', ms: 1000, when: 'after' })
    const slow = chargeRequest()
    const before = attempts.length
    await expect(processor.charge(slow)).rejects.toBeInstanceOf(ProcessorUnavailableError)
    expect(attempts.length - before).toBeGreaterThan(1)
    // It arrived, and Stripe charged: an unknown outcome, for the recovery worker's lookup.
    expect(received(slow.idempotencyKey)).toHaveLength(1)
    expect(moved(slow.idempotencyKey)).toHaveLength(1)
  })

  it('when a second call under the key comes while the first still executes, then Stripe says 409 in use, the SDK waits, and both get the one PaymentIntent', async () => {
    const { processor } = processorWith()
    server.fault(CREATE, { kind: 'delay', ms: 700, when: 'before' })
    const request = chargeRequest()
    const [first, second] = await Promise.all([
      processor.charge(request),
      new Promise((resolve) => setTimeout(resolve, 100)).then(() => processor.charge(request)),
    ])
    expect(second).toEqual(first)
    expect(received(request.idempotencyKey).map((each) => each.outcome)).toContain(409)
    expect(moved(request.idempotencyKey)).toHaveLength(1)
  })
})

describe('settling a lost answer from reads that cannot lag', () => {
  it('when every answer to a charge was lost, then the lookup finds the PaymentIntent from the key itself, not from search, which has not indexed it', async () => {
    const { processor } = processorWith()
    server.fault(CREATE, { kind: 'drop-after' }, 3)
    const request = chargeRequest()
    const notBefore = new Date()
    await expect(processor.charge(request)).rejects.toBeInstanceOf(ProcessorUnavailableError)
    const [intent] = moved(request.idempotencyKey)
    expect(await processor.lookup({ kind: 'charge', request, notBefore })).toEqual({
      kind: 'charge',
      outcome: { status: 'succeeded', processorReference: intent!.object, funds: expect.any(Object) },
    })
    expect(moved(request.idempotencyKey)).toHaveLength(1)
    expect(server.requests.filter((each) => each.path.includes('/search'))).toEqual([])
  })

  it('when a charge never arrived, then the lookup says so, and the key is Stripe’s no more to charge under: a late call is refused', async () => {
    const { processor } = processorWith()
    server.fault(CREATE, { kind: 'drop-before' }, 3)
    const request = chargeRequest()
    await expect(processor.charge(request)).rejects.toBeInstanceOf(ProcessorUnavailableError)
    expect(await processor.lookup({ kind: 'charge', request, notBefore: new Date() })).toBeUndefined()
    await expect(processor.charge(request)).rejects.toBeInstanceOf(ProcessorIdempotencyError)
    expect(moved(request.idempotencyKey)).toEqual([])
    // The probe that took the key did not stay open either.
    const probes = [...server.ledger.paymentIntents.values()].filter(
      (intent) => intent.metadata.operation_id === request.idempotencyKey,
    )
    expect(probes.map((intent) => [intent.status, intent.metadata.lookup_probe])).toEqual([['canceled', 'true']])
  })

  it('when the claim is older than Stripe keeps its keys, then the lookup lists the PaymentIntents since, and sends nothing under the key', async () => {
    const { processor } = processorWith()
    const request = chargeRequest()
    const charged = await processor.charge(request)
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000)
    expect(await processor.lookup({ kind: 'charge', request, notBefore: twoDaysAgo })).toEqual({
      kind: 'charge',
      outcome: charged,
    })
    expect(await processor.lookup({ kind: 'charge', request: chargeRequest(), notBefore: twoDaysAgo })).toBeUndefined()
    expect(received(request.idempotencyKey)).toHaveLength(1)
    expect(server.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/payment_intents' })
  })
})
