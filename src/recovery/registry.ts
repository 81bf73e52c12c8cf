// Every Recovery of the service, for the recovery worker: it settles an abandoned claim by the Recovery its claim
// names (src/idempotency/recovery.ts). Each route names its own where it declares idempotency; a fork adds its
// Recovery to its route and here, and the API refuses to start when a route names one the worker would not have.
import { chargeRecovery, settlementRecovery } from '../charges/recovery.js'
import { loadConfig } from '../config.js'
import type { Sql } from '../db/connect.js'
import { type ChargeSettings, chargeSettingsOf } from '../processor/pricing.js'
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
 * Refuses to start an API with a route whose Recovery the worker does not have (its unknown outcomes would never
 * settle), or with two Recoveries of one name (a claim would be settled by the wrong one). Names the route.
 */
export function requireRecoveries(
  routes: readonly { method: string; url: string; recovery?: Recovery | undefined }[],
  registered: readonly Recovery[],
): void {
  const names = registered.map((recovery) => recovery.name)
  const twice = names.find((name, n) => names.indexOf(name) !== n)
  if (twice) throw new Error(`two Recoveries are named ${twice} in src/recovery/registry.ts: give each its own name`)
  for (const route of routes) {
    if (route.recovery && !names.includes(route.recovery.name)) {
      throw new Error(
        `${route.method} ${route.url} names the Recovery ${route.recovery.name}, which the recovery worker does not ` +
          `have: add it to src/recovery/registry.ts (docs/extending.md)`,
      )
    }
  }
}
