// The client's types cannot forget a resource: every resource openapi.yaml describes (a component with an `object`
// const, a list aside) and every request body is a type the client exports (src/client/types.ts, which exports
// the types generated into src/client/api.ts), so a fork's new resource reaches its integrators' code; this names
// the one it lacks (a route whose openapi entry names no `client` method brings no type along).
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'

const ROOT = new URL('../../', import.meta.url)
const spec = parse(await readFile(new URL('openapi.yaml', ROOT), 'utf8'))
const typesSource = [
  await readFile(new URL('src/client/types.ts', ROOT), 'utf8'),
  await readFile(new URL('src/client/api.ts', ROOT), 'utf8'),
].join('\n')
const exported = new Set(
  [...typesSource.matchAll(/export (?:type|interface) (\w+)|export type \{([^}]+)\}/g)].flatMap((match) =>
    match[1] ? [match[1]] : match[2]!.split(',').map((name) => name.trim()),
  ),
)

describe('the client’s types', () => {
  it('when openapi.yaml describes a resource or a request body, then the client exports a type for it', () => {
    const schemas = spec.components.schemas as Record<
      string,
      { properties?: { object?: { const?: string } }; anyOf?: unknown[] }
    >
    const resources = Object.entries(schemas).filter(
      ([name, schema]) =>
        schema.properties?.object?.const !== undefined &&
        schema.properties.object.const !== 'list' &&
        !name.endsWith('List'),
    )
    const bodies = Object.values(
      spec.paths as Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: { $ref: string } }> } }>
      >,
    )
      .flatMap((methods) => Object.values(methods))
      .flatMap((operation) => {
        // A body with a schema of its own; the processor's webhook is bytes the route verifies, not a type.
        const reference = operation.requestBody?.content['application/json']?.schema.$ref
        return reference ? [reference.split('/').pop()!] : []
      })
      .filter((name) => name !== 'Empty' && name !== 'VoidCharge')
    const wanted = [...resources.map(([name]) => name), 'Event', ...bodies]
    const missing = [...new Set(wanted)].filter(
      (name) => !exported.has(name) && !exported.has(`${name}Body`) && !exported.has(name.replace(/Request$/, 'Body')),
    )
    expect(missing.map((name) => `src/client/types.ts exports no type for ${name}`)).toEqual([])
  })
})
