// Turns flat string maps (query strings, path parameters, environment variables) into typed values,
// strictly: "0x10", "1e3", " 12 " and "1.5" are not integers here, whatever Number() would make of them.
import type { TSchema } from 'typebox'
import { Value } from 'typebox/value'

const INTEGER = /^-?(0|[1-9][0-9]*)$/
const DECIMAL = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/

/** A copy of `input` with each string converted to what its property's schema expects, where it can be. */
export function convertStrict(schema: TSchema, input: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema as { properties?: Record<string, TSchema & { type?: string }> }).properties ?? {}
  const output: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(input)) {
    output[name] = typeof value === 'string' ? convertString(properties[name]?.type, value) : value
  }
  return output
}

function convertString(type: string | undefined, value: string): unknown {
  if (type === 'integer' && INTEGER.test(value) && Number.isSafeInteger(Number(value))) return Number(value)
  if (type === 'number' && DECIMAL.test(value)) return Number(value)
  if (type === 'boolean' && (value === 'true' || value === 'false')) return value === 'true'
  return value
}

/** One readable line per error, naming the allowed values of an enum rather than only saying "not allowed". */
export function describeErrors(schema: TSchema, value: unknown, prefix = ''): string[] {
  return [...Value.Errors(schema, value)].map((error) => {
    const path = `${prefix}${error.instancePath.slice(1).replaceAll('/', '.')}`
    const allowed = (error.params as { allowedValues?: unknown[] } | undefined)?.allowedValues
    return allowed ? `${path} must be one of: ${allowed.join(', ')}` : `${path} ${error.message}`
  })
}
