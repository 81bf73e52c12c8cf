// The processor the configuration names (PROCESSOR), timed and bounded by PROCESSOR_TIMEOUT_MS
// (instrumented.ts): the simulated one by default, or Stripe through its SDK.
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { Sql } from '../db/connect.js'
import { instrumented } from './instrumented.js'
import type { PaymentProcessor } from './processor.js'
import { createSimulatedProcessor } from './simulated.js'
import { stripeClients } from './stripe/client.js'
import { createStripeProcessor } from './stripe/stripe.js'

export function createProcessor(config: Config, sql: Sql, log: Logger): PaymentProcessor {
  const timeoutMs = config.PROCESSOR_TIMEOUT_MS
  const processor =
    config.PROCESSOR === 'stripe'
      ? createStripeProcessor({
          clients: stripeClients({
            // loadConfig refuses PROCESSOR=stripe without one.
            secretKey: config.STRIPE_SECRET_KEY ?? '',
            apiUrl: config.STRIPE_API_URL,
            timeoutMs,
          }),
          timeoutMs,
          webhookSecret: config.STRIPE_WEBHOOK_SECRET,
          connectWebhookSecret: config.STRIPE_CONNECT_WEBHOOK_SECRET,
        })
      : createSimulatedProcessor({ sql, slowDelayMs: config.SIMULATED_SLOW_MS, publicUrl: simulatedPublicUrl(config) })
  return instrumented(processor, { timeoutMs, log: log.child({ component: 'processor' }) })
}

/** Where a browser reaches the service: SIMULATED_PUBLIC_URL, or the address it listens on (loopback for any). */
export function simulatedPublicUrl(config: Pick<Config, 'SIMULATED_PUBLIC_URL' | 'HOST' | 'PORT'>): string {
  if (config.SIMULATED_PUBLIC_URL) return config.SIMULATED_PUBLIC_URL
  const host =
    config.HOST === '0.0.0.0' || config.HOST === '::'
      ? '127.0.0.1'
      : config.HOST.includes(':')
        ? `[${config.HOST}]`
        : config.HOST
  return `http://${host}:${config.PORT}`
}
