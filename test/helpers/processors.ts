// The processors a test can run against: the simulated one (its ledger in the test database) and the Stripe
// processor against the Stripe-compatible test server (test/helpers/stripe). Each says how many times money moved
// under an idempotency key, at the processor itself, for tests that count.
import type { Sql } from '../../src/db/connect.js'
import type { PaymentProcessor } from '../../src/processor/processor.js'
import { createSimulatedProcessor } from '../../src/processor/simulated.js'
import { createStripeClient } from '../../src/processor/stripe/client.js'
import { createStripeProcessor } from '../../src/processor/stripe/stripe.js'
import { startStripeServer, type StripeTestServer } from './stripe/server.js'

export interface ProcessorUnderTest {
  processor: PaymentProcessor
  /** Money movements (charges, authorizations, captures, voids, refunds) the processor performed under the key. */
  movementsUnder(idempotencyKey: string): Promise<number>
}

export function simulatedUnderTest(sql: Sql, slowDelayMs = 300): ProcessorUnderTest {
  return {
    processor: createSimulatedProcessor({ sql, slowDelayMs }),
    movementsUnder: async (key) => (await sql`select 1 from simulated_processor.operations where idempotency_key = ${key} and outcome->>'status' is distinct from 'failed'`).length,
  }
}

export function stripeUnderTest(server: StripeTestServer, timeoutMs = 5000): ProcessorUnderTest {
  return {
    processor: stripeProcessorFor(server, timeoutMs),
    movementsUnder: async (key) => server.ledger.movements.filter((movement) => movement.idempotencyKey === key).length,
  }
}

export function stripeProcessorFor(server: StripeTestServer, timeoutMs = 5000): PaymentProcessor {
  return createStripeProcessor({ stripe: createStripeClient({ secretKey: server.secretKey, apiUrl: server.url, timeoutMs }), timeoutMs })
}

export { startStripeServer, type StripeTestServer }
