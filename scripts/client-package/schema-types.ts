// TypeScript declarations printed from the TypeBox schemas the server validates with (they are JSON Schema at run
// time), for the client package: the same types as src/client/types.ts, with no TypeBox behind them.
type Schema = {
  type?: string | string[]
  const?: unknown
  enum?: readonly unknown[]
  anyOf?: Schema[]
  oneOf?: Schema[]
  items?: Schema
  properties?: Record<string, Schema>
  required?: string[]
  additionalProperties?: boolean | Schema
  /** TypeBox's Record: keys matching a pattern, each with its value schema. */
  patternProperties?: Record<string, Schema>
  description?: string
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

/** The type a value valid by `schema` has, as TypeScript source. */
export function typeOf(schema: Schema, indent = ''): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(' | ')
  const union = schema.anyOf ?? schema.oneOf
  if (union) return union.map((member) => typeOf(member, indent)).join(' | ')
  const types = [schema.type ?? []].flat()
  if (types.length > 1) return types.map((type) => typeOf({ ...schema, type }, indent)).join(' | ')
  switch (types[0]) {
    case 'string':
      return 'string'
    case 'integer':
    case 'number':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'null':
      return 'null'
    case 'array': {
      const item = typeOf(schema.items ?? {}, indent)
      return /[|&]/.test(item) ? `(${item})[]` : `${item}[]`
    }
    case 'object':
      return objectType(schema, indent)
    default:
      return 'unknown'
  }
}

function objectType(schema: Schema, indent: string): string {
  const inner = `${indent}  `
  const required = new Set(schema.required ?? [])
  const lines = Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const key = IDENTIFIER.test(name) ? name : JSON.stringify(name)
    const doc = property.description
      ? `${inner}/** ${property.description.trim().replace(/\*\//g, '*\\/').replace(/\n/g, ' ')} */\n`
      : ''
    return `${doc}${inner}${key}${required.has(name) ? '' : '?'}: ${typeOf(property, inner)}`
  })
  const values = [
    ...Object.values(schema.patternProperties ?? {}),
    ...(typeof schema.additionalProperties === 'object' ? [schema.additionalProperties] : []),
  ]
  if (values.length) lines.push(`${inner}[key: string]: ${values.map((value) => typeOf(value, inner)).join(' | ')}`)
  else if (schema.additionalProperties !== false && !schema.properties) return 'Record<string, unknown>'
  return lines.length ? `{\n${lines.join('\n')}\n${indent}}` : 'Record<string, never>'
}

/** `export type Name = ...` for each schema (a TypeBox one is JSON Schema at run time), in order. */
export function declarations(schemas: Record<string, object>): string {
  return Object.entries(schemas as Record<string, Schema>)
    .map(
      ([name, schema]) =>
        `${schema.description ? `/** ${schema.description.trim()} */\n` : ''}export type ${name} = ${typeOf(schema)}\n`,
    )
    .join('\n')
}
