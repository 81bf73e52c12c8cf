/// <reference types="vite/client" />
// What every processor must do, whoever moves the money: the simulated processor and the Stripe processor (against
// the Stripe-compatible test server) alike. A new processor (Adyen, Checkout.com) passes this before anything else:
// add it to `processors`. A new operation of the boundary (a payout) fails the last case until a case calls it, and
// looks it up, on every processor: an operation the Stripe test server does not serve cannot go untested. A
// processor that answers some operations "received" and decides them later (Adyen) names a source that shows it.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chargeIdOf } from '../../src/charges/calls.js'
import {
  type ChargeRequest,
  type LookupRequest,
  type OperationKind,
  type PaymentProcessor,
  PROCESSOR_METHODS,
  ProcessorIdempotencyError,
  ProcessorRequestError,
} from '../../src/processor/processor.js'
import { createTestDatabase } from '../helpers/database.js'
import type { ContractCases } from './contract-cases/cases.js'
import {
  type ProcessorUnderTest,
  simulatedUnderTest,
  startStripeServer,
  stripeUnderTest,
} from '../helpers/processors.js'

const processors: {
  name: string
  start: () => Promise<ProcessorUnderTest & { close(): Promise<void> }>
  /** A source whose captures, voids and refunds the processor receives and decides later; none: it decides at once. */
  decidesLater?: string
}[] = [
  {
    name: 'simulated',
    decidesLater: 'pm_card_decidedLater',
    start: async () => {
      const database = await createTestDatabase()
      return { ...simulatedUnderTest(database.sql), close: () => database.drop() }
    },
  },
  {
    name: 'stripe',
    start: async () => {
      const server = await startStripeServer()
      return { ...stripeUnderTest(server), close: () => server.close() }
    },
  },
  {
    // Stripe Connect: every call with Stripe-Account, counted in the connected account's own books at the server.
    name: 'stripe, on a connected account',
    start: async () => {
      const server = await startStripeServer()
      return { ...stripeUnderTest(server, { connected: server.connect.create() }), close: () => server.close() }
    },
  },
]

/** The processor account every request of the suite under way is made on (a connected account, or the platform). */
let onProcessorAccount: string | null = null

const chargeRequest = (overrides: Partial<ChargeRequest> = {}): ChargeRequest => {
  const idempotencyKey = overrides.idempotencyKey ?? randomUUID()
  return {
    amountCents: 2500,
    currency: 'usd',
    source: 'pm_card_visa',
    accountId: 'acct_contract',
    processorAccount: onProcessorAccount,
    idempotencyKey,
    chargeId: chargeIdOf(idempotencyKey),
    ...overrides,
  }
}

/** Every kind of operation, named once: tsc names a kind added to the boundary (Operations) and missing here. */
const KINDS = { charge: true, authorization: true, capture: true, void: true, refund: true } as const satisfies Record<
  OperationKind,
  true
>

/** The processor, recording which of its methods the suite called, and which kinds it looked up. */
function recording(processor: PaymentProcessor, called: Set<string>): PaymentProcessor {
  return new Proxy(processor, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (typeof value !== 'function' || !(PROCESSOR_METHODS as readonly (string | symbol)[]).includes(name))
        return value
      return (...args: unknown[]) => {
        called.add(String(name))
        if (name === 'lookup') called.add(`lookup:${(args[0] as LookupRequest).kind}`)
        return value.apply(target, args)
      }
    },
  })
}

describe.each(processors)('the $name processor', ({ name, start, decidesLater }) => {
  let under: ProcessorUnderTest & { close(): Promise<void> }
  const called = new Set<string>()
  beforeAll(async () => {
    const started = await start()
    under = { ...started, processor: recording(started.processor, called) }
    onProcessorAccount = started.processorAccount
  })
  afterAll(() => under?.close())

  it('when a charge succeeds, then it has a reference, and the same request again gets the same outcome with one movement', async () => {
    const request = chargeRequest()
    const first = await under.processor.charge(request)
    // What it kept (`funds`), when its answer says: the same on the retry.
    expect(first).toMatchObject({ status: 'succeeded', processorReference: expect.any(String) })
    expect(await under.processor.charge(request)).toEqual(first)
    expect(await under.movementsUnder(request.idempotencyKey)).toBe(1)
  })

  it('when the card is declined, then the outcome is a failed charge with the decline code and message, and nothing moved', async () => {
    const generic = chargeRequest({ source: 'pm_card_chargeDeclined' })
    expect(await under.processor.charge(generic)).toMatchObject({
      status: 'failed',
      failureCode: 'generic_decline',
      failureMessage: 'Your card was declined.',
    })
    const funds = chargeRequest({ source: 'pm_card_chargeDeclinedInsufficientFunds' })
    expect(await under.processor.charge(funds)).toMatchObject({
      status: 'failed',
      failureCode: 'insufficient_funds',
      failureMessage: 'Your card has insufficient funds.',
    })
    const expired = chargeRequest({ source: 'pm_card_chargeDeclinedExpiredCard' })
    expect(await under.processor.charge(expired)).toMatchObject({ status: 'failed', failureCode: 'expired_card' })
    for (const request of [generic, funds, expired]) expect(await under.movementsUnder(request.idempotencyKey)).toBe(0)
  })

  it('when the source is unknown, then the request is refused naming source, and nothing moved', async () => {
    const request = chargeRequest({ source: 'pm_card_doesNotExist' })
    const refusal = await under.processor.charge(request).catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(ProcessorRequestError)
    expect(refusal).toMatchObject({ field: 'source', operationNotPerformed: true })
    expect(await under.movementsUnder(request.idempotencyKey)).toBe(0)
  })

  it('when the card asks for authentication, then the outcome is requires_action with the page to send the customer to, and nothing moved', async () => {
    const request = chargeRequest({ source: 'pm_card_authenticationRequired', returnUrl: 'https://shop.example/back' })
    const outcome = await under.processor.charge(request)
    expect(outcome).toEqual({
      status: 'requires_action',
      processorReference: expect.any(String),
      nextAction: {
        type: 'redirect_to_url',
        url: expect.stringMatching(/^https?:\/\//),
        returnUrl: 'https://shop.example/back',
      },
    })
    expect(await under.processor.charge(request)).toEqual(outcome)
    expect(await under.movementsUnder(request.idempotencyKey)).toBe(0)
  })

  it('when a bank debit is made with a mandate, then it is processing; without one, or to capture later, it is refused naming the field', async () => {
    const mandate = { ipAddress: '203.0.113.7', userAgent: 'contract' }
    expect(await under.processor.charge(chargeRequest({ source: 'pm_usBankAccount_success', mandate }))).toEqual({
      status: 'processing',
      processorReference: expect.any(String),
    })
    await expect(under.processor.charge(chargeRequest({ source: 'pm_usBankAccount_success' }))).rejects.toMatchObject({
      field: 'mandate',
      operationNotPerformed: true,
    })
    await expect(
      under.processor.authorize(chargeRequest({ source: 'pm_usBankAccount_success', mandate })),
    ).rejects.toBeInstanceOf(ProcessorRequestError)
  })

  it('when a charge is made, then the processor lists it, for the comparison, with the charge it was made for', async () => {
    const request = chargeRequest()
    const outcome = await under.processor.charge(request)
    const states = await under.processor.later.statesSince(new Date(Date.now() - 60_000), [], request.processorAccount)
    expect(states.payments).toContainEqual(
      expect.objectContaining({
        object: 'payment',
        reference: (outcome as { processorReference: string }).processorReference,
        chargeId: request.chargeId,
        status: 'succeeded',
        amountCents: 2500,
        amountCapturedCents: 2500,
      }),
    )
  })

  it('when an operation id is used again with other parameters, then it is refused as an idempotency error', async () => {
    const request = chargeRequest()
    await under.processor.charge(request)
    await expect(under.processor.charge({ ...request, amountCents: 9900 })).rejects.toBeInstanceOf(
      ProcessorIdempotencyError,
    )
    expect(await under.movementsUnder(request.idempotencyKey)).toBe(1)
  })

  it('when an authorization is captured in part and another voided, then each is done once, and a retry changes nothing', async () => {
    const held = chargeRequest()
    const authorized = await under.processor.authorize(held)
    expect(authorized).toEqual({ status: 'succeeded', processorReference: expect.any(String) })
    const reference = (authorized as { processorReference: string }).processorReference
    const capture = {
      chargeReference: reference,
      amountCents: 2000,
      accountId: held.accountId,
      processorAccount: held.processorAccount,
      idempotencyKey: randomUUID(),
    }
    expect(await under.processor.capture(capture)).toMatchObject({ processorReference: expect.any(String) })
    await under.processor.capture(capture)
    expect(await under.movementsUnder(capture.idempotencyKey)).toBe(1)

    const other = await under.processor.authorize(chargeRequest())
    const voided = {
      chargeReference: (other as { processorReference: string }).processorReference,
      accountId: held.accountId,
      processorAccount: held.processorAccount,
      idempotencyKey: randomUUID(),
    }
    expect(await under.processor.void(voided)).toEqual({ processorReference: expect.any(String) })
    await under.processor.void(voided)
    expect(await under.movementsUnder(voided.idempotencyKey)).toBe(1)
  })

  it.runIf(decidesLater)(
    'when it decides later, then a capture, a void and a refund say so, and a retry and the lookup say the same',
    async () => {
      const keyed = { accountId: 'acct_contract', processorAccount: onProcessorAccount }
      const referenceOf = async (kind: 'authorize' | 'charge') =>
        ((await under.processor[kind](chargeRequest({ source: decidesLater }))) as { processorReference: string })
          .processorReference
      const notBefore = new Date(Date.now() - 1000)
      const capture = { ...keyed, chargeReference: await referenceOf('authorize'), amountCents: 2000 }
      const voided = { ...keyed, chargeReference: await referenceOf('authorize') }
      const refund = { ...keyed, chargeReference: await referenceOf('charge'), amountCents: 700 }
      const asked = [
        { kind: 'capture' as const, request: { ...capture, idempotencyKey: randomUUID() } },
        { kind: 'void' as const, request: { ...voided, idempotencyKey: randomUUID() } },
        { kind: 'refund' as const, request: { ...refund, idempotencyKey: randomUUID() } },
      ]
      for (const { kind, request } of asked) {
        const call = () =>
          kind === 'capture'
            ? under.processor.capture(request as typeof capture & { idempotencyKey: string })
            : kind === 'void'
              ? under.processor.void(request)
              : under.processor.refund(request as typeof refund & { idempotencyKey: string })
        const outcome = await call()
        expect(outcome, kind).toEqual({ processorReference: expect.any(String), decidedLater: true })
        expect(await call()).toEqual(outcome)
        expect(await under.processor.lookup({ kind, request, notBefore } as LookupRequest)).toEqual({ kind, outcome })
      }
    },
  )

  it('when a charge is refunded in part and then in full, then each refund is done once, with a reference of its own', async () => {
    const request = chargeRequest()
    const charged = (await under.processor.charge(request)) as { processorReference: string }
    const refund = (amountCents: number) => ({
      chargeReference: charged.processorReference,
      amountCents,
      accountId: 'acct_contract',
      processorAccount: request.processorAccount,
      idempotencyKey: randomUUID(),
    })
    const [part, rest] = [refund(1000), refund(1500)]
    const first = await under.processor.refund(part)
    const second = await under.processor.refund(rest)
    expect(first.processorReference).not.toEqual(second.processorReference)
    expect(await under.processor.refund(part)).toEqual(first)
    expect((await under.movementsUnder(part.idempotencyKey)) + (await under.movementsUnder(rest.idempotencyKey))).toBe(
      2,
    )
  })

  it('when each kind of operation is looked up, then the lookup says what was done; an operation never sent is not found', async () => {
    const notBefore = new Date(Date.now() - 1000)
    const charged = chargeRequest()
    const chargeOutcome = await under.processor.charge(charged)
    expect(await under.processor.lookup({ kind: 'charge', request: charged, notBefore })).toEqual({
      kind: 'charge',
      outcome: chargeOutcome,
    })
    const declined = chargeRequest({ source: 'pm_card_chargeDeclined' })
    const declineOutcome = await under.processor.charge(declined)
    expect(await under.processor.lookup({ kind: 'charge', request: declined, notBefore })).toEqual({
      kind: 'charge',
      outcome: declineOutcome,
    })

    const held = chargeRequest()
    const authorization = (await under.processor.authorize(held)) as { status: 'succeeded'; processorReference: string }
    expect(await under.processor.lookup({ kind: 'authorization', request: held, notBefore })).toEqual({
      kind: 'authorization',
      outcome: authorization,
    })
    const capture = {
      chargeReference: authorization.processorReference,
      amountCents: 2500,
      accountId: held.accountId,
      processorAccount: held.processorAccount,
      idempotencyKey: randomUUID(),
    }
    expect(await under.processor.lookup({ kind: 'capture', request: capture, notBefore })).toBeUndefined()
    const captured = await under.processor.capture(capture)
    expect(await under.processor.lookup({ kind: 'capture', request: capture, notBefore })).toEqual({
      kind: 'capture',
      outcome: captured,
    })

    const refund = {
      chargeReference: authorization.processorReference,
      amountCents: 500,
      accountId: held.accountId,
      processorAccount: held.processorAccount,
      idempotencyKey: randomUUID(),
    }
    expect(await under.processor.lookup({ kind: 'refund', request: refund, notBefore })).toBeUndefined()
    const refunded = await under.processor.refund(refund)
    expect(await under.processor.lookup({ kind: 'refund', request: refund, notBefore })).toEqual({
      kind: 'refund',
      outcome: refunded,
    })

    const other = (await under.processor.authorize(chargeRequest())) as { processorReference: string }
    const voided = {
      chargeReference: other.processorReference,
      accountId: held.accountId,
      processorAccount: held.processorAccount,
      idempotencyKey: randomUUID(),
    }
    expect(await under.processor.lookup({ kind: 'void', request: voided, notBefore })).toBeUndefined()
    const voidOutcome = await under.processor.void(voided)
    expect(await under.processor.lookup({ kind: 'void', request: voided, notBefore })).toEqual({
      kind: 'void',
      outcome: voidOutcome,
    })

    const neverSent = chargeRequest()
    expect(await under.processor.lookup({ kind: 'charge', request: neverSent, notBefore })).toBeUndefined()
    expect(await under.movementsUnder(neverSent.idempotencyKey)).toBe(0)
  })

  // The cases of a fork's operations, each in a file of its own (test/processor/contract-cases/).
  for (const module of Object.values(
    import.meta.glob<{ contractCases?: ContractCases }>('./contract-cases/*.ts', { eager: true }),
  ))
    module.contractCases?.(() => under)

  it('when every case above has run, then each method of the boundary, and the lookup of each kind, was exercised', () => {
    const expected = [...PROCESSOR_METHODS, ...Object.keys(KINDS).map((kind) => `lookup:${kind}`)]
    const missing = expected.filter((method) => !called.has(method))
    expect(
      missing,
      `the contract suite has no case that calls ${missing.join(', ')} on the ${name} processor: add one above (a ` +
        `test server that does not serve it fails there)`,
    ).toEqual([])
  })
})
