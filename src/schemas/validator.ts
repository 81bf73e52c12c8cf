// The validator for every route schema: TypeBox, with the rules JSON Schema cannot say, and words a client can act on.
// - No string anywhere (body, query, path; values and keys) may hold NUL or an unpaired surrogate: PostgreSQL
//   refuses the first, and the second would be stored as U+FFFD, a silent rewrite of what the client sent.
//   Caught here, such input never reaches the processor.
// - An unknown field is named as one ("body/nope is not a field this request takes"), not in the validator's own
//   words ("schema is false", then once more for the object).
// - Query and path values convert strictly: "0x10" or "1e3" is not an integer (src/schemas/strict-convert.ts).
// - A `date-time` is RFC 3339's, as OpenAPI says, and nothing more (src/schemas/timestamp.ts).
// - A value outside an enum is told the allowed ones, or that they are lower case ("USD").
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify'
import type { TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import { Format } from 'typebox/format'
import { convertStrict } from './strict-convert.js'
import { isDateTime } from './timestamp.js'

Format.Set('date-time', isDateTime)

const UNSAFE_TEXT = /[\0\p{Cs}]/u
const UNSAFE_TEXT_MESSAGE = 'must not contain NUL or unpaired surrogate characters'

export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema)
  return (value: unknown) => {
    const unsafe = unsafeTextErrors(value)
    if (unsafe.length) return { error: unsafe }
    const converted = httpPart === 'body' || !isRecord(value) ? value : convertStrict(schema, value)
    if (check.Check(converted)) return { value: converted }
    return { error: inPlainWords(check.Errors(converted) as FastifySchemaValidationError[], converted) }
  }
}

const UNKNOWN_FIELD = 'is not a field this request takes'

/**
 * TypeBox's words, made plain. It reports an unknown field twice: as a false schema at the field, and as a list at
 * its object; one line says it. A value not among the allowed ones is told which are, and, when only its case is
 * wrong ("USD"), that they are lower case.
 */
function inPlainWords(errors: FastifySchemaValidationError[], value: unknown): FastifySchemaValidationError[] {
  const unknown = (error: FastifySchemaValidationError) =>
    error.keyword === 'boolean' && error.schemaPath.endsWith('/additionalProperties')
  return errors
    .filter((error) => !(error.keyword === 'additionalProperties' && errors.some(unknown)))
    .map((error) => {
      if (unknown(error)) return { ...error, keyword: 'additionalProperties', message: UNKNOWN_FIELD }
      if (error.keyword === 'enum') return { ...error, message: notAllowed(error, valueAt(value, error.instancePath)) }
      return error
    })
}

function notAllowed(error: FastifySchemaValidationError, given: unknown): string {
  const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues ?? []
  // What was sent is said back only when it is short: it is the client's text, in the server's words.
  const said = typeof given === 'string' && given.length <= 40 ? given : undefined
  const lower = said?.toLowerCase()
  if (lower !== said && allowed.includes(lower)) return `must be lower case: ${lower}, not ${said}`
  return `must be one of: ${allowed.join(', ')}${said === undefined ? '' : ` (not ${JSON.stringify(said)})`}`
}

/** The value a JSON pointer (an error's instancePath) names in `root`. */
function valueAt(root: unknown, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>(
      (at, part) => (isRecord(at) || Array.isArray(at) ? (at as Record<string, unknown>)[part] : undefined),
      root,
    )
}

/** Every string and object key in `value` that holds text PostgreSQL would refuse or rewrite. */
export function unsafeTextErrors(value: unknown, path = ''): FastifySchemaValidationError[] {
  if (typeof value === 'string') return UNSAFE_TEXT.test(value) ? [unsafeAt(path)] : []
  if (Array.isArray(value)) return value.flatMap((item, index) => unsafeTextErrors(item, `${path}/${index}`))
  if (!isRecord(value)) return []
  return Object.entries(value).flatMap(([key, member]) => {
    const at = `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`
    return UNSAFE_TEXT.test(key)
      ? [unsafeAt(`${path}/${JSON.stringify(key).slice(1, -1)}`)]
      : unsafeTextErrors(member, at)
  })
}

function unsafeAt(instancePath: string): FastifySchemaValidationError {
  return { keyword: 'text', instancePath, schemaPath: '#', params: {}, message: UNSAFE_TEXT_MESSAGE }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
