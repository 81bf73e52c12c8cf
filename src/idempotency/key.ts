// Reads the Idempotency-Key header: a bare token (what most clients send) or the
// draft-ietf-httpapi-idempotency-key-header form, a structured-field string ("...").
import { Problem } from '../problems.js'
import { idempotencyKeyProblem } from '../schemas/idempotency-key.js'

/**
 * The key from a request's raw header lines: undefined when there is none, an idempotency-key-invalid problem
 * when there are two (Node would join them into "a, b", one key nobody sent) or the one is malformed.
 */
export function idempotencyKeyFromRawHeaders(rawHeaders: string[]): string | undefined {
  const values: string[] = []
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const [name, value] = [rawHeaders[index], rawHeaders[index + 1]]
    if (name?.toLowerCase() === 'idempotency-key' && value !== undefined) values.push(value)
  }
  if (values.length > 1) throw invalid('send exactly one Idempotency-Key header')
  return parseIdempotencyKey(values[0])
}

/** Returns the key, undefined when the header is absent, or throws an idempotency-key-invalid problem. */
export function parseIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  const key = header.startsWith('"') ? unquoteStructuredString(header) : header
  const problem = idempotencyKeyProblem(key)
  if (problem) throw invalid(problem)
  return key
}

/** RFC 8941 section 3.3.3: inside the quotes, only \" and \\ are escapes. */
function unquoteStructuredString(value: string): string {
  if (value.length < 2 || !value.endsWith('"')) throw invalid('a quoted key must end with a double quote')
  let key = ''
  for (let index = 1; index < value.length - 1; index++) {
    const char = value[index]
    if (char === '\\') {
      const escaped = value[++index]
      if ((escaped !== '"' && escaped !== '\\') || index === value.length - 1)
        throw invalid('a quoted key may escape only " and \\')
      key += escaped
    } else if (char === '"') {
      throw invalid('a double quote inside a quoted key must be escaped')
    } else {
      key += char
    }
  }
  return key
}

function invalid(reason: string): Problem {
  return new Problem('idempotency-key-invalid', `Idempotency-Key is not valid: ${reason}.`)
}
