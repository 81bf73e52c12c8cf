// Which database failures mean "the database is unreachable or overloaded right now" (a 503 the client may
// retry) rather than a defect (a 500). Either way the transaction rolled back and nothing was half-written.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  // postgres.js's own codes for a connection that failed to open, or was lost mid-query; QUERY_TIMEOUT: a query
  // unanswered past the statement timeout and a margin (src/db/connect.ts), cancelled; CANCEL_UNANSWERED: the
  // cancel of one got no answer either, and the connection was closed.
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'QUERY_TIMEOUT',
  'QUEUE_TIMEOUT',
  'CANCEL_UNANSWERED',
])

// SQLSTATEs: connection exceptions (08), too many connections / out of resources (53), shutdown and
// cancellation (57: statement_timeout is 57014), lock timeouts (55P03), serialization failures (40), and a write
// refused by a read-only node (25006: a primary being demoted in a failover; the retry reaches the new one).
const TRANSIENT_SQLSTATE = /^(08|53|57|40)...$|^55P03$|^25006$/

/** A deadlock or serialization failure: the database is fine, another transaction won; a retry goes through. */
export function isConcurrentUpdate(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === '40P01' || code === '40001'
}

export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code !== 'string') return error instanceof DatabaseTimeoutError
  return NETWORK_CODES.has(code) || TRANSIENT_SQLSTATE.test(code)
}

/** A database call that did not answer in time (a frozen or partitioned server answers nothing at all). */
export class DatabaseTimeoutError extends Error {
  override name = 'DatabaseTimeoutError'
}

/** Resolves as `promise` does, or rejects with DatabaseTimeoutError after `ms`. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DatabaseTimeoutError(`${what} did not answer within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}
