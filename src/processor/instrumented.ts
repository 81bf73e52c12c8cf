// Times every processor call, counts its outcome, and gives it up after PROCESSOR_TIMEOUT_MS as an unknown
// outcome, without the routes or the processor knowing.
//
// The timeout is what the recovery worker's "the processor never saw it" rests on: a call given up is assumed
// never to reach the processor later than that (a real integration passes the same timeout to its HTTP client,
// which then closes the connection), and the worker waits longer than it (RECOVERY_GRACE_SECONDS, checked in
// src/config.ts) before it asks.
import { processorCalls } from '../observability/metrics.js'
import { type ChargeOutcome, type PaymentProcessor, ProcessorUnavailableError } from './processor.js'

export function instrumented(processor: PaymentProcessor, options: { timeoutMs: number }): PaymentProcessor {
  async function timed<T>(operation: string, call: () => Promise<T>, outcomeOf: (result: T) => string): Promise<T> {
    const stop = processorCalls.startTimer({ operation })
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ProcessorUnavailableError(`the processor did not answer ${operation} within ${options.timeoutMs} ms`)), options.timeoutMs)
    })
    try {
      const result = await Promise.race([call(), timedOut])
      stop({ outcome: outcomeOf(result) })
      return result
    } catch (error) {
      stop({ outcome: error instanceof ProcessorUnavailableError ? 'unavailable' : 'error' })
      throw error
    } finally {
      clearTimeout(timer)
    }
  }
  const declinedOrSucceeded = (outcome: ChargeOutcome) => (outcome.status === 'failed' ? 'declined' : 'succeeded')
  return {
    charge: (request) => timed('charge', () => processor.charge(request), declinedOrSucceeded),
    authorize: (request) => timed('authorize', () => processor.authorize(request), declinedOrSucceeded),
    capture: (request) => timed('capture', () => processor.capture(request), () => 'succeeded'),
    void: (request) => timed('void', () => processor.void(request), () => 'succeeded'),
    refund: (request) => timed('refund', () => processor.refund(request), () => 'succeeded'),
    lookup: (key) => timed('lookup', () => processor.lookup(key), (found) => (found ? 'found' : 'not_found')),
  }
}
