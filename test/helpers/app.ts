// Builds the app against a fresh database, with small factories for the accounts and requests tests need.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll } from 'vitest'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { pino } from 'pino'
import { createAccount } from '../../src/accounts/api-keys.js'
import { buildApp } from '../../src/app.js'
import type { PaymentProcessor } from '../../src/charges/processor.js'
import { createSimulatedProcessor } from '../../src/charges/simulated-processor.js'
import type { Sql } from '../../src/db/connect.js'
import type { Config } from '../../src/config.js'
import { createTestDatabase } from './database.js'

export interface TestContext {
  app: FastifyInstance
  sql: Sql
  databaseUrl: string
  newAccount(name?: string): Promise<TestAccount>
  close(): Promise<void>
}

export interface TestAccount {
  id: string
  apiKey: string
  /** POSTs JSON as this account. Pass `key: null` to send no Idempotency-Key; by default a fresh one is sent. */
  post(url: string, body: unknown, options?: { key?: string | null; headers?: Record<string, string> }): Promise<LightMyRequestResponse>
  get(url: string): Promise<LightMyRequestResponse>
}

export async function setupTestApp(options: { processor?: PaymentProcessor; config?: Partial<Config> } = {}): Promise<TestContext> {
  const database = await createTestDatabase()
  const app = await buildApp({
    sql: database.sql,
    processor: options.processor ?? createSimulatedProcessor({ slowDelayMs: 300 }),
    config: options.config ?? {},
    log: pino({ level: process.env.LOG_LEVEL ?? 'silent' }),
  })
  await app.ready()
  return {
    app,
    sql: database.sql,
    databaseUrl: database.url,
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
            headers: { authorization, 'content-type': 'application/json', ...(key !== null && { 'idempotency-key': key }), ...headers },
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
export function useTestApp(options: Parameters<typeof setupTestApp>[0] = {}): { context: TestContext; account: TestAccount } {
  const suite = {} as { context: TestContext; account: TestAccount }
  beforeAll(async () => {
    suite.context = await setupTestApp(options)
    suite.account = await suite.context.newAccount()
  })
  afterAll(() => suite.context.close())
  return suite
}

/** A valid charge body; override any field. */
export function chargeBody(overrides: Record<string, unknown> = {}) {
  return { amount_cents: 2500, currency: 'usd', source: 'pm_card_visa', ...overrides }
}

export async function countCharges(sql: Sql, accountId: string): Promise<number> {
  const [row] = await sql<{ count: number }[]>`select count(*)::int as count from charges where account_id = ${accountId}`
  return row!.count
}

/** The simulated processor, recording every call made to it. */
export function recordingProcessor(inner: PaymentProcessor = createSimulatedProcessor({ slowDelayMs: 300 })) {
  const calls: { operation: 'charge' | 'refund'; idempotencyKey: string }[] = []
  const processor: PaymentProcessor = {
    charge: (request) => (calls.push({ operation: 'charge', idempotencyKey: request.idempotencyKey }), inner.charge(request)),
    refund: (request) => (calls.push({ operation: 'refund', idempotencyKey: request.idempotencyKey }), inner.refund(request)),
  }
  return { processor, calls }
}
