// Builds the app against a fresh database, with small factories for the accounts and requests tests need.
import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, beforeAll } from 'vitest'
import type { FastifyBaseLogger, FastifyInstance, LightMyRequestResponse } from 'fastify'
import { pino } from 'pino'
import { createAccount } from '../../src/accounts/api-keys.js'
import { buildApp } from '../../src/app.js'
import { type PaymentProcessor, PROCESSOR_METHODS, ProcessorUnavailableError } from '../../src/processor/processor.js'
import { type ProcessorFactory, simulatedProcessor } from './processors.js'
import type { Sql } from '../../src/db/connect.js'
import { type Config, loadConfig } from '../../src/config.js'
import { type ChargeSettings, chargeSettingsOf } from '../../src/processor/pricing.js'
import { watchContract } from './contract.js'
import { createTestDatabase } from './database.js'

export { type ProcessorFactory, simulatedProcessor }

export interface TestContext {
  app: FastifyInstance
  sql: Sql
  processor: PaymentProcessor
  /** Responses that did not match openapi.yaml; useTestApp fails the test that produced one. */
  contractViolations: string[]
  databaseUrl: string
  /** The app's pricing and authorization settings, as its configuration makes them. */
  chargeSettings: ChargeSettings
  newAccount(name?: string): Promise<TestAccount>
  close(): Promise<void>
}

export interface TestAccount {
  id: string
  apiKey: string
  /** POSTs JSON as this account. Pass `key: null` to send no Idempotency-Key; by default a fresh one is sent. */
  post(
    url: string,
    body: unknown,
    options?: { key?: string | null; headers?: Record<string, string> },
  ): Promise<LightMyRequestResponse>
  get(url: string): Promise<LightMyRequestResponse>
}

export async function setupTestApp(
  options: {
    processor?: ProcessorFactory
    config?: Partial<Config>
    log?: FastifyBaseLogger
    /** What time it is for the books (src/app.ts); a test moves it to see funds become available. */
    clock?: () => Date
  } = {},
): Promise<TestContext> {
  const database = await createTestDatabase()
  const processor = (options.processor ?? simulatedProcessor)(database.sql)
  const app = await buildApp({
    sql: database.sql,
    processor,
    config: options.config ?? {},
    log: options.log ?? pino({ level: process.env.LOG_LEVEL ?? 'silent' }),
    ...(options.clock && { clock: options.clock }),
  })
  const contractViolations = watchContract(app)
  await app.ready()
  return {
    app,
    sql: database.sql,
    processor,
    contractViolations,
    databaseUrl: database.url,
    chargeSettings: chargeSettingsOf({ ...loadConfig({}), ...options.config }),
    newAccount: async (name = 'Test account') => {
      const { account_id: id, api_key: apiKey } = await createAccount(database.sql, name)
      const authorization = `Bearer ${apiKey}`
      return {
        id,
        apiKey,
        post: (url, body, { key = randomUUID(), headers = {} } = {}) =>
          app.inject({
            method: 'POST',
            url,
            headers: {
              authorization,
              'content-type': 'application/json',
              ...(key !== null && { 'idempotency-key': key }),
              ...headers,
            },
            payload: typeof body === 'string' ? body : JSON.stringify(body),
          }),
        get: (url) => app.inject({ method: 'GET', url, headers: { authorization } }),
      }
    },
    close: async () => {
      await app.close()
      await database.drop()
    },
  }
}

/**
 * For a test file: one app and database, built before its tests and closed after them, with one account.
 * Read `suite.context` and `suite.account` inside tests (they are set once beforeAll has run).
 */
export function useTestApp(options: Parameters<typeof setupTestApp>[0] = {}): {
  context: TestContext
  account: TestAccount
} {
  const suite = {} as { context: TestContext; account: TestAccount }
  beforeAll(async () => {
    suite.context = await setupTestApp(options)
    suite.account = await suite.context.newAccount()
  })
  afterEach(() => failOnContractViolations(suite.context))
  afterAll(() => suite.context.close())
  return suite
}

/** Fails the current test if a response it produced did not match openapi.yaml. */
export function failOnContractViolations(context: TestContext | undefined): void {
  const violations = context?.contractViolations.splice(0) ?? []
  if (violations.length) throw new Error(`responses that do not match openapi.yaml:\n${violations.join('\n')}`)
}

/** A valid charge body; override any field. */
export function chargeBody(overrides: Record<string, unknown> = {}) {
  return { amount_cents: 2500, currency: 'usd' as const, source: 'pm_card_visa', ...overrides }
}

export async function countCharges(sql: Sql, accountId: string): Promise<number> {
  const [row] = await sql<
    { count: number }[]
  >`select count(*)::int as count from charges where account_id = ${accountId}`
  return row!.count
}

/**
 * The simulated processor, recording every call made to it, with switches a test flips to make the next call
 * misbehave: hold it at a gate, time it out before it does anything, or lose its answer after it acted.
 */
export function controllableProcessor(inner: ProcessorFactory = simulatedProcessor) {
  type Operation = Exclude<(typeof PROCESSOR_METHODS)[number], 'lookup'>
  const calls: { operation: Operation; idempotencyKey: string }[] = []
  let gate: Promise<void> | undefined
  let lookupGate: { reached: () => void; opened: Promise<void> } | undefined
  let timeOutNext = false
  let loseNextAnswer = false
  async function around<T>(operation: Operation, idempotencyKey: string, call: () => Promise<T>): Promise<T> {
    calls.push({ operation, idempotencyKey })
    const waitFor = gate
    gate = undefined
    await waitFor
    if (timeOutNext) {
      timeOutNext = false
      throw new ProcessorUnavailableError('test: timed out before the processor acted')
    }
    const result = await call()
    if (loseNextAnswer) {
      loseNextAnswer = false
      throw new ProcessorUnavailableError('test: the processor acted, the answer was lost')
    }
    return result
  }
  return {
    calls,
    factory: ((sql) => {
      const processor = inner(sql)
      // Every money-moving method alike (PROCESSOR_METHODS): a new operation of the boundary needs nothing here.
      const moving = PROCESSOR_METHODS.filter((method): method is Operation => method !== 'lookup').map((method) => [
        method,
        (request: { idempotencyKey: string }) =>
          around(method, request.idempotencyKey, () =>
            (processor[method] as (request: unknown) => Promise<unknown>)(request),
          ),
      ])
      return {
        ...(processor.keyRetentionSeconds !== undefined && { keyRetentionSeconds: processor.keyRetentionSeconds }),
        // What it tells later, and the simulated processor's controls (its routes), as the processor has them.
        later: processor.later,
        ...('controls' in processor && { controls: processor.controls }),
        ...(Object.fromEntries(moving) as Omit<PaymentProcessor, 'lookup' | 'later'>),
        async lookup(key) {
          const found = await processor.lookup(key)
          const held = lookupGate
          lookupGate = undefined
          held?.reached()
          await held?.opened
          return found
        },
      }
    }) satisfies ProcessorFactory,
    /** Holds the next call until the returned function is called. */
    holdNext(): () => void {
      let open!: () => void
      gate = new Promise((resolve) => (open = resolve))
      return open
    },
    /**
     * Holds the answer of the next lookup, once the processor has answered it: `reached` resolves then, and the
     * answer (stale by the time it is let go) goes to the caller when `open` is called.
     */
    holdNextLookupAnswer(): { reached: Promise<void>; open: () => void } {
      let open!: () => void
      let reached!: () => void
      const opened = new Promise<void>((resolve) => (open = resolve))
      const reachedPromise = new Promise<void>((resolve) => (reached = resolve))
      lookupGate = { reached, opened }
      return { reached: reachedPromise, open }
    },
    timeOutNext: () => {
      timeOutNext = true
    },
    loseNextAnswer: () => {
      loseNextAnswer = true
    },
  }
}
