// Idempotency keys, the client's half of the mechanism: one key per logical operation, made before the first
// attempt and held still across every retry. `generate` suits an operation that lives in one process; `derive`
// suits work that may run again elsewhere (a queue job redelivered after a crash), where the same facts must give
// the same key: `derive('charge', invoice.id, 'attempt', n)` is `charge:inv_123:attempt:1`.
import { idempotencyKeyProblem } from '../schemas/idempotency-key.js'

export const idempotencyKey = {
  /** A new random key (a UUID). */
  generate(): string {
    return globalThis.crypto.randomUUID()
  },

  /**
   * A deterministic key from its parts, joined by `:`. Characters other than letters, digits and `-._~` are
   * percent-encoded within each part, so distinct parts never give the same key (`a:b` + `c` is not `a` + `b:c`).
   */
  derive(...parts: (string | number)[]): string {
    if (parts.length === 0) throw new TypeError('idempotencyKey.derive needs at least one part')
    return idempotencyKey.check(parts.map(encodePart).join(':'))
  },

  /** Returns `key` if the server will accept it, or throws a TypeError that says why not. */
  check(key: string): string {
    const problem = idempotencyKeyProblem(key)
    if (problem) throw new TypeError(`not a valid Idempotency-Key: ${problem}`)
    return key
  },
}

function encodePart(part: string | number): string {
  if (typeof part === 'number' && !Number.isSafeInteger(part))
    throw new TypeError(`an idempotency key part must be an integer or a string, not ${part}`)
  const text = String(part)
  if (text.length === 0) throw new TypeError('an idempotency key part must not be empty')
  return encodeURIComponent(text).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
}
