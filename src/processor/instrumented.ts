// Times every processor call and counts its outcome, without the routes or the processor knowing.
import { processorCalls } from '../observability/metrics.js'
import { type ChargeOutcome, type PaymentProcessor, ProcessorUnavailableError } from './processor.js'

export function instrumented(processor: PaymentProcessor): PaymentProcessor {
  async function timed<T>(operation: string, call: () => Promise<T>, outcomeOf: (result: T) => string): Promise<T> {
    const stop = processorCalls.startTimer({ operation })
    try {
      const result = await call()
      stop({ outcome: outcomeOf(result) })
      return result
    } catch (error) {
      stop({ outcome: error instanceof ProcessorUnavailableError ? 'unavailable' : 'error' })
      throw error
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
