// Times every processor call, counts its outcome, and gives it up after PROCESSOR_TIMEOUT_MS as an unknown
// outcome, without the routes or the processor knowing. Every method of the boundary is wrapped alike
// (PROCESSOR_METHODS), so a new operation needs nothing here.
//
// The timeout is what the recovery worker's "the processor never saw it" rests on: a call given up is assumed
// never to reach the processor later than that (a real integration bounds its HTTP client by the same time, as
// src/processor/stripe/ does: nothing is sent after it, and what is in flight is cut), and the worker waits
// longer than it (RECOVERY_GRACE_SECONDS, checked in src/config.ts) before it asks.
import type { Logger } from 'pino'
import { processorCalls } from '../observability/metrics.js'
import {
  type PaymentProcessor,
  PROCESSOR_METHODS,
  ProcessorIdempotencyError,
  ProcessorRequestError,
  ProcessorUnavailableError,
} from './processor.js'

export function instrumented(
  processor: PaymentProcessor,
  options: { timeoutMs: number; log?: Logger },
): PaymentProcessor {
  async function timed(operation: string, call: () => Promise<unknown>): Promise<unknown> {
    const stop = processorCalls.startTimer({ operation })
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new ProcessorUnavailableError(`the processor did not answer ${operation} within ${options.timeoutMs} ms`),
          ),
        options.timeoutMs,
      )
    })
    try {
      const result = await Promise.race([call(), timedOut])
      stop({ outcome: outcomeOf(operation, result) })
      return result
    } catch (error) {
      stop({ outcome: failureOf(error) })
      if (error instanceof ProcessorIdempotencyError) {
        // Every call under one operation id is built from the same request: a refusal means a defect here.
        options.log?.error(
          { err: error, operation },
          'DEFECT: the processor refused an operation id it had seen with other parameters; the outcome is left to ' +
            'the recovery worker',
        )
      }
      throw error
    } finally {
      clearTimeout(timer)
    }
  }
  const wrapped = Object.fromEntries(
    PROCESSOR_METHODS.map((method) => [
      method,
      (request: never) => timed(method, () => (processor[method] as (request: never) => Promise<unknown>)(request)),
    ]),
  ) as unknown as PaymentProcessor
  // What is not a call (keyRetentionSeconds, later) is passed on as it is.
  return { ...processor, ...wrapped }
}

/** A decline is an outcome (`declined`), a lookup says whether it found anything. */
function outcomeOf(operation: string, result: unknown): string {
  if (operation === 'lookup') return result ? 'found' : 'not_found'
  return (result as { status?: string } | undefined)?.status === 'failed' ? 'declined' : 'succeeded'
}

function failureOf(error: unknown): string {
  if (error instanceof ProcessorUnavailableError) return 'unavailable'
  if (error instanceof ProcessorIdempotencyError) return 'idempotency_error'
  if (error instanceof ProcessorRequestError) return 'refused'
  return 'error'
}
