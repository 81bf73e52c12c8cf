// A stand-in processor driven by test sources, as in Stripe's test mode. It honours idempotency keys like a
// real one: the same key returns the first outcome, so the crash-recovery path can be exercised end to end.
import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { type ChargeOutcome, type PaymentProcessor, ProcessorUnavailableError } from './processor.js'

/**
 * Test sources, as in Stripe's test mode:
 * - pm_card_visa, pm_card_mastercard: succeed
 * - pm_card_chargeDeclined, pm_card_insufficientFunds: declined (card_declined, insufficient_funds)
 * - pm_card_slow: succeeds after a delay (2 s by default), long enough for a client to time out
 * - pm_card_processorDown: fails as unavailable, every time
 * - anything else: declined as unknown_source
 */
export function createSimulatedProcessor(options: { slowDelayMs?: number } = {}): PaymentProcessor {
  const slowDelayMs = options.slowDelayMs ?? 2000
  return {
    async charge({ source, idempotencyKey }) {
      if (source === 'pm_card_slow') await sleep(slowDelayMs)
      if (source === 'pm_card_processorDown') throw new ProcessorUnavailableError('simulated processor outage')
      return outcomeFor(source, idempotencyKey)
    },
    async refund({ idempotencyKey }) {
      return { processorReference: reference('sim_re', idempotencyKey) }
    },
  }
}

function outcomeFor(source: string, idempotencyKey: string): ChargeOutcome {
  switch (source) {
    case 'pm_card_visa':
    case 'pm_card_mastercard':
    case 'pm_card_slow':
      return { status: 'succeeded', processorReference: reference('sim_ch', idempotencyKey) }
    case 'pm_card_chargeDeclined':
      return { status: 'failed', failureCode: 'card_declined', failureMessage: 'Your card was declined.' }
    case 'pm_card_insufficientFunds':
      return { status: 'failed', failureCode: 'insufficient_funds', failureMessage: 'Your card has insufficient funds.' }
    default:
      return { status: 'failed', failureCode: 'unknown_source', failureMessage: `No such payment source: ${source.slice(0, 60)}.` }
  }
}

/** Deterministic in the key: a retry of the same operation gets the same processor reference back. */
function reference(prefix: string, idempotencyKey: string): string {
  return `${prefix}_${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 24)}`
}
