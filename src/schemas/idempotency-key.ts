// What an Idempotency-Key may be: checked by the server that reads it (src/idempotency/key.ts) and by the client
// that builds one (src/client/idempotency-key.ts), so that a key the client accepts is never refused.

export const MAX_KEY_LENGTH = 255
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/

/** Why `key` cannot be an idempotency key, or undefined when it can. */
export function idempotencyKeyProblem(key: string): string | undefined {
  if (key.length === 0) return 'the key is empty'
  if (key.length > MAX_KEY_LENGTH) return `the key is ${key.length} characters long; at most ${MAX_KEY_LENGTH} are allowed`
  if (!PRINTABLE_ASCII.test(key)) return 'the key may contain printable ASCII characters only'
  return undefined
}
