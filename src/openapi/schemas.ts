// The TypeBox schemas the routes validate with, written as openapi.yaml's schemas: a schema with a `title` is a
// component (#/components/schemas/<title>), referenced wherever it appears, so that a resource is described once.
// A `description` belongs to the place a schema is used (a property, a parameter), so it stays beside the $ref.
import type { TSchema } from 'typebox'

export type JsonSchema = { [keyword: string]: unknown }

/** Keywords whose value is a schema, a list of schemas, or a map of them (JSON Schema 2020-12). */
const ONE = ['items', 'additionalProperties', 'not', 'propertyNames', 'contains', 'if', 'then', 'else'] as const
const MANY = ['anyOf', 'allOf', 'oneOf', 'prefixItems'] as const
const MAP = ['properties', 'patternProperties', '$defs'] as const

export class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {}

  /** The schema as the document writes it: its titled parts as $refs, their definitions collected here. */
  write(schema: TSchema | JsonSchema): JsonSchema {
    return this.#walk(JSON.parse(JSON.stringify(schema)) as JsonSchema)
  }

  /** Adds a component by name (one with no title of its own, as the problem bodies). */
  define(name: string, schema: JsonSchema): JsonSchema {
    this.#register(name, this.#walkParts(schema))
    return { $ref: `#/components/schemas/${name}` }
  }

  #walk(node: JsonSchema): JsonSchema {
    const { title, description, ...shape } = node
    const walked = this.#walkParts(shape)
    if (typeof title !== 'string') return description === undefined ? walked : { ...walked, description }
    this.#register(title, { title, ...walked })
    return { $ref: `#/components/schemas/${title}`, ...(description === undefined ? {} : { description }) }
  }

  #walkParts(node: JsonSchema): JsonSchema {
    const out: JsonSchema = { ...node }
    for (const keyword of ONE) if (isSchema(out[keyword])) out[keyword] = this.#walk(out[keyword] as JsonSchema)
    for (const keyword of MANY)
      if (Array.isArray(out[keyword])) out[keyword] = (out[keyword] as JsonSchema[]).map((member) => this.#walk(member))
    for (const keyword of MAP) {
      if (isSchema(out[keyword]))
        out[keyword] = Object.fromEntries(
          Object.entries(out[keyword] as Record<string, JsonSchema>).map(([name, member]) => [
            name,
            this.#walk(member),
          ]),
        )
    }
    return out
  }

  #register(name: string, definition: JsonSchema): void {
    const known = this.schemas[name]
    if (known && JSON.stringify(known) !== JSON.stringify(definition)) {
      throw new Error(
        `two different schemas are titled ${name}: give one another title (${JSON.stringify(known).slice(0, 200)} ` +
          `vs ${JSON.stringify(definition).slice(0, 200)})`,
      )
    }
    this.schemas[name] = definition
  }
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
