// Every endpoint whose unknown outcomes the service settles by itself. A fork adds its own Recovery here; the
// idempotency plugin then keeps the requests of that endpoint, and the recovery worker settles them.
import { chargeRecovery, settlementRecovery } from '../charges/recovery.js'
import { loadConfig } from '../config.js'
import type { Sql } from '../db/connect.js'
import { type ChargeSettings, chargeSettingsOf } from '../ledger/pricing.js'
import type { PaymentProcessor } from '../processor/processor.js'
import { refundRecovery } from '../refunds/recovery.js'
import type { Recovery } from '../idempotency/recovery.js'

export function recoveries(
  processor: PaymentProcessor,
  sql: Sql,
  settings: ChargeSettings = chargeSettingsOf(loadConfig({})),
): Recovery[] {
  return [
    chargeRecovery(processor, settings),
    settlementRecovery(processor, sql, 'capture', settings.pricing),
    settlementRecovery(processor, sql, 'void', settings.pricing),
    refundRecovery(processor, sql),
  ]
}

/**
 * Refuses to start an API with a route that calls out (its openapi entry admits `processor-unavailable`) but has
 * no Recovery: its unknown outcomes would never settle by themselves. Names the route and where to register one.
 */
export function requireRecoveries(
  routes: readonly { method: string; url: string; problems?: readonly string[] | undefined }[],
  registered: readonly Recovery[],
): void {
  const recoverable = new Set(registered.map((recovery) => recovery.endpoint))
  for (const route of routes) {
    const endpoint = `${route.method} ${route.url}`
    if (route.problems?.includes('processor-unavailable') && !recoverable.has(endpoint)) {
      throw new Error(
        `${endpoint} answers processor-unavailable but has no Recovery: register one in src/recovery/registry.ts ` +
          `(docs/extending.md)`,
      )
    }
  }
}
