// The processors a test can run against: the simulated one (its ledger in the test database) and the Stripe
// processor against the Stripe-compatible test server (test/helpers/stripe). Each says what it did at the
// processor itself (money movements under a key; an account's charges and refunds), for tests that count.
// The suites that carry the promise run once with each: describe.each(PROCESSORS) and useProcessor(name).
import { afterAll, beforeAll } from 'vitest'
import type { Sql } from '../../src/db/connect.js'
import type { PaymentProcessor } from '../../src/processor/processor.js'
import { createSimulatedProcessor } from '../../src/processor/simulated.js'
import { stripeClients } from '../../src/processor/stripe/client.js'
import { createStripeProcessor } from '../../src/processor/stripe/stripe.js'
import { startStripeServer, type StripeTestServer } from './stripe/server.js'

/** Builds the processor for a test database (the simulated one keeps its ledger there). */
export type ProcessorFactory = (sql: Sql) => PaymentProcessor

export const simulatedProcessor: ProcessorFactory = (sql) => createSimulatedProcessor({ sql, slowDelayMs: 300 })

export interface ProcessorUnderTest {
  processor: PaymentProcessor
  /** What the requests sent to it name as their processor account (Keyed.processorAccount). */
  processorAccount: string | null
  /** Money movements (charges, authorizations, captures, voids, refunds) the processor performed under the key. */
  movementsUnder(idempotencyKey: string): Promise<number>
}

export function simulatedUnderTest(sql: Sql, slowDelayMs = 300): ProcessorUnderTest {
  return {
    processor: createSimulatedProcessor({ sql, slowDelayMs }),
    processorAccount: null,
    movementsUnder: (key) => simulatedMovements(sql, key),
  }
}

/** With `connected`, requests are made on that connected account, and counted in its books at the server. */
export function stripeUnderTest(
  server: StripeTestServer,
  options: { timeoutMs?: number; connected?: string } = {},
): ProcessorUnderTest {
  const { connected } = options
  return {
    processor: stripeProcessorFor(server, options.timeoutMs),
    processorAccount: connected ?? null,
    movementsUnder: async (key) => stripeMovements(server, key, connected),
  }
}

/** The signing secret of the service's webhook endpoint at the Stripe test server, in every test. */
export const STRIPE_WEBHOOK_SECRET = 'whsec_testserverendpointsecret0000'
/** The signing secret of the service's Connect endpoint (every connected account's events) at the test server. */
export const STRIPE_CONNECT_WEBHOOK_SECRET = 'whsec_testserverconnectsecret00000'

export function stripeProcessorFor(server: StripeTestServer, timeoutMs = 5000): PaymentProcessor {
  return createStripeProcessor({
    clients: stripeClients({ secretKey: server.secretKey, apiUrl: server.url, timeoutMs }),
    timeoutMs,
    webhookSecret: STRIPE_WEBHOOK_SECRET,
    connectWebhookSecret: STRIPE_CONNECT_WEBHOOK_SECRET,
  })
}

export const PROCESSORS = [{ name: 'simulated' as const }, { name: 'stripe' as const }]

/** What the processor did for an account's charges: charges and authorizations, refunds, and the sum refunded. */
export interface ProcessorLedger {
  charges: number
  refunds: number
  refunded: number
}

export interface ProcessorChoice {
  /** For useTestApp (or controllableProcessor): called once the suite's beforeAll has started what it needs. */
  factory: ProcessorFactory
  movementsUnder(sql: Sql, idempotencyKey: string): Promise<number>
  ledgerOf(sql: Sql, accountId: string): Promise<ProcessorLedger>
  /** The captures, voids and refunds the processor performed on one of the service's charges, by kind. */
  operationsOn(sql: Sql, chargeId: string): Promise<Record<string, number>>
  /** The Stripe test server, with PROCESSORS' 'stripe'. */
  stripe(): StripeTestServer
}

/**
 * For a test file or describe block: the processor by name, with the Stripe test server run around it, started with
 * `stripeOptions` (an account's own card pricing).
 */
export function useProcessor(
  name: 'simulated' | 'stripe',
  stripeOptions: Parameters<typeof startStripeServer>[0] = {},
): ProcessorChoice {
  let server: StripeTestServer | undefined
  if (name === 'stripe') {
    beforeAll(async () => {
      server = await startStripeServer(stripeOptions)
    })
    afterAll(() => server?.close())
  }
  const stripe = () => {
    if (!server) throw new Error('the Stripe test server runs only with the stripe processor, once beforeAll has run')
    return server
  }
  if (name === 'simulated') {
    return {
      factory: simulatedProcessor,
      movementsUnder: simulatedMovements,
      ledgerOf: simulatedLedger,
      operationsOn: simulatedOperationsOn,
      stripe,
    }
  }
  return {
    factory: () => stripeProcessorFor(stripe()),
    movementsUnder: async (_sql, key) => stripeMovements(stripe(), key),
    ledgerOf: async (_sql, accountId) => stripeLedger(stripe(), accountId),
    operationsOn: (sql, chargeId) => stripeOperationsOn(stripe(), sql, chargeId),
    stripe,
  }
}

async function simulatedMovements(sql: Sql, key: string): Promise<number> {
  // A decline moved nothing, nor did a charge not decided yet (requires_action, processing) when it answered.
  return (
    await sql`
    select 1 from simulated_processor.operations
    where idempotency_key = ${key} and coalesce(outcome->>'status', 'succeeded') not in ('failed', 'requires_action',
      'processing')`
  ).length
}

/** Movements under the key in the platform's books at the server, or in the connected account's. */
function stripeMovements(server: StripeTestServer, key: string, connected?: string): number {
  const ledger = connected ? server.connect.ledger(connected) : server.ledger
  return ledger.movements.filter((movement) => movement.idempotencyKey === key).length
}

async function simulatedLedger(sql: Sql, accountId: string): Promise<ProcessorLedger> {
  const [row] = await sql<ProcessorLedger[]>`
    with mine as (select processor_reference from charges where account_id = ${accountId})
    select count(*) filter (where o.kind in ('charge', 'authorization') and o.outcome->>'status' is distinct from
      'failed')::int as charges,
           count(*) filter (where o.kind = 'refund')::int as refunds,
           coalesce(sum((o.parameters->>'amount_cents')::int) filter (where o.kind = 'refund'), 0)::int as refunded
    from simulated_processor.operations o
    where o.outcome->>'processorReference' in (select processor_reference from mine)
       or o.parameters->>'charge_reference' in (select processor_reference from mine)`
  return row!
}

/** Stripe's own books for the account: movements on the PaymentIntents its charges are, and their refunds. */
function stripeLedger(server: StripeTestServer, accountId: string): ProcessorLedger {
  const intents = new Set(
    [...server.ledger.paymentIntents.values()]
      .filter((intent) => intent.metadata.account_id === accountId)
      .map((intent) => intent.id),
  )
  const refunds = [...server.ledger.refunds.values()].filter((refund) => intents.has(refund.payment_intent as string))
  const charges = server.ledger.movements.filter(
    (movement) => (movement.kind === 'charge' || movement.kind === 'authorization') && intents.has(movement.object),
  )
  return {
    charges: charges.length,
    refunds: refunds.length,
    refunded: refunds.reduce((sum, refund) => sum + refund.amount, 0),
  }
}

async function simulatedOperationsOn(sql: Sql, chargeId: string): Promise<Record<string, number>> {
  const rows = await sql<{ kind: string; count: number }[]>`
    select o.kind, count(*)::int as count from simulated_processor.operations o
    join charges c on c.processor_reference = o.parameters->>'charge_reference'
    where c.id = ${chargeId} group by o.kind`
  return Object.fromEntries(rows.map((row) => [row.kind, row.count]))
}

async function stripeOperationsOn(
  server: StripeTestServer,
  sql: Sql,
  chargeId: string,
): Promise<Record<string, number>> {
  const [charge] = await sql<
    { processor_reference: string }[]
  >`select processor_reference from charges where id = ${chargeId}`
  const refunds = new Set(
    [...server.ledger.refunds.values()]
      .filter((refund) => refund.payment_intent === charge?.processor_reference)
      .map((refund) => refund.id),
  )
  const counts: Record<string, number> = {}
  for (const movement of server.ledger.movements) {
    if (movement.kind === 'charge' || movement.kind === 'authorization') continue
    if (movement.object === charge?.processor_reference || refunds.has(movement.object))
      counts[movement.kind] = (counts[movement.kind] ?? 0) + 1
  }
  return counts
}

export { startStripeServer, type StripeTestServer }
