// What an Idempotency-Key may be: checked by the server that reads it (src/idempotency/key.ts) and by the client
// that builds one (src/client/idempotency-key.ts), so that a key the client accepts is never refused.

export const MAX_KEY_LENGTH = 255
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/

/** Why `key` cannot be an idempotency key, or undefined when it can. */
export function idempotencyKeyProblem(key: string): string | undefined {
  if (key.length === 0) return 'the key is empty'
  if (key.length > MAX_KEY_LENGTH)
    return `the key is ${key.length} characters long; at most ${MAX_KEY_LENGTH} are allowed`
  if (!PRINTABLE_ASCII.test(key)) return 'the key may contain printable ASCII characters only'
  return undefined
}

/**
 * The header as openapi.yaml describes it: a bare token (255 printable ASCII characters at most, not starting with
 * a space or a quote) or a quoted structured-field string of 1 to 255 characters once unescaped (so up to
 * 2 + 2 x 255 as sent). src/idempotency/key.ts reads it; test/openapi.test.ts checks that both agree.
 */
export const IDEMPOTENCY_KEY_HEADER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: true,
  description:
    '1 to 255 printable ASCII characters, as a bare token or as a structured-field string (`"..."`, with `\\"` and ' +
    '`\\\\` escapes). Scoped to your account and this endpoint. One new key per logical operation, the same key on ' +
    'every retry of it.',
  schema: {
    type: 'string',
    minLength: 1,
    maxLength: 512,
    pattern: '^(?:[!#-~][ -~]{0,254}|"(?:[ !#-\\[\\]-~]|\\\\["\\\\]){1,255}")$',
  },
  example: '8e03978e-40d5-43e8-bc93-6894a57f9324',
} as const
