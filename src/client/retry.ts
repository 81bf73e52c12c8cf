// When a failed attempt is tried again, and after how long. Retried: no answer at all (a network error, or the
// attempt's own timeout), 408 (the server gave up reading the request: a stalled connection or process; the
// same key makes a retry safe), 409 idempotency-request-in-flight and charge-operation-in-progress (another
// request is finishing the same work), 429, and 5xx. Never retried: 400, 401, 402, 404, 422 and other 409s,
// whose answer a retry cannot change. Waits grow exponentially with full jitter, or follow the server's Retry-After.
import type { ProblemSlug } from './errors.js'

export interface RetryPolicy {
  /** Attempts in all, the first one included (1: no retries). */
  maxAttempts: number
  /** The ceiling of the first wait; it doubles with each retry, up to maxDelayMs. The wait is random below it. */
  baseDelayMs: number
  maxDelayMs: number
  /** How long one attempt may take before it is abandoned (and retried). Above the server's own deadline. */
  attemptTimeoutMs: number
  /** No attempt starts, and no wait runs, past this time since the call began. */
  deadlineMs: number
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 5_000,
  attemptTimeoutMs: 10_000,
  deadlineMs: 30_000,
}

const RETRIED_CONFLICTS: ReadonlySet<ProblemSlug> = new Set([
  'idempotency-request-in-flight',
  'charge-operation-in-progress',
])

/** Whether an answer with this status and problem type is worth another attempt with the same key. */
export function isRetryable(status: number, type: ProblemSlug): boolean {
  if (status === 409) return RETRIED_CONFLICTS.has(type)
  return status === 408 || status === 429 || status >= 500
}

/** Full jitter (a random wait between 0 and the exponential ceiling), or Retry-After plus a little jitter. */
export function delayBeforeRetry(
  policy: RetryPolicy,
  attempt: number,
  retryAfterMs: number | undefined,
  random = Math.random,
): number {
  if (retryAfterMs !== undefined) return retryAfterMs + random() * policy.baseDelayMs
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1))
  return random() * ceiling
}

/**
 * Retry-After as milliseconds: delay-seconds or an HTTP date (RFC 9110 section 10.2.3); undefined if absent or
 * unreadable.
 */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined
  const text = header.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  const date = Date.parse(text)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}
