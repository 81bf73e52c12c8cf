// TypeScript types printed from JSON Schema (the components of openapi.yaml, as TypeBox wrote them), for the typed
// client (./client-source.ts): the types the server validates with, with no TypeBox behind them.
export type Schema = {
  /** Another component: its name is the type. */
  $ref?: string
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
  if (schema.$ref) return schema.$ref.split('/').pop() as string
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
    const doc = property.description ? `${inner}${docComment(property.description, inner)}\n` : ''
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

/** `export type Name = ...` for each schema, in order. */
export function declarations(schemas: Record<string, Schema>): string {
  return Object.entries(schemas)
    .map(
      ([name, schema]) =>
        `${schema.description ? `${docComment(schema.description)}\n` : ''}export type ${name} = ${typeOf(schema)}\n`,
    )
    .join('\n')
}

/**
 * A doc comment, on one line when it fits in 120 characters at `indent`, wrapped otherwise (within 112: the formatter
 * may indent a member of a union deeper than it was printed).
 */
export function docComment(text: string, indent = ''): string {
  const words = text.trim().replace(/\*\//g, '*\\/').split(/\s+/)
  const oneLine = `/** ${words.join(' ')} */`
  if (indent.length + oneLine.length <= 120) return oneLine
  const lines: string[] = []
  for (const word of words) {
    const last = lines.at(-1)
    if (last !== undefined && indent.length + 3 + last.length + 1 + word.length <= 112)
      lines[lines.length - 1] = `${last} ${word}`
    else lines.push(word)
  }
  return ['/**', ...lines.map((line) => `${indent} * ${line}`), `${indent} */`].join('\n')
}
