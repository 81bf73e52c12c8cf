// The contract, enforced: every response an app under test sends is checked against openapi.yaml (its status is
// documented for the operation, its content type too, and its body matches the schema). A mismatch fails the
// test that produced it (see useTestApp), so the document and the code cannot drift apart.
import { readFileSync } from 'node:fs'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { FastifyInstance } from 'fastify'
import { parse } from 'yaml'

// biome-ignore lint/suspicious/noExplicitAny: the parsed YAML, walked by what each node holds
type Node = Record<string, any>

const spec = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as Node
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats.default(ajv)
ajv.addSchema(spec, 'openapi')
const validators = new Map<string, ValidateFunction>()

const pointer = (segments: string[]) =>
  segments.map((segment) => segment.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')
const resolve = (node: Node): Node =>
  node?.$ref
    ? resolve(
        node.$ref
          .slice(2)
          .split('/')
          .reduce((at: Node, key: string) => at?.[key], spec),
      )
    : node

/** What is wrong with this response, by the document; undefined when nothing is (or the route is not an operation). */
export function contractViolation(
  method: string,
  route: string | undefined,
  status: number,
  contentType: string | undefined,
  body: string,
): string | undefined {
  if (!route) return undefined // no route matched: not an operation of the document
  const path = route.replace(/:(\w+)/g, '{$1}')
  // The reference page's files, the simulated processor's pages.
  if (path.startsWith('/docs') || path.startsWith('/simulated-processor')) return undefined
  const operation = spec.paths?.[path]?.[method.toLowerCase()]
  if (!operation) return `${method} ${path} is not in openapi.yaml`
  const responseKey = String(status) in operation.responses ? String(status) : 'default'
  const response = operation.responses[responseKey] && resolve(operation.responses[responseKey])
  const where = `${method} ${path} ${status}`
  if (!response) return `${where}: status ${status} is not documented`
  const type = contentType?.split(';')[0]?.trim()
  if (!response.content) return body.length ? `${where}: a body was sent, none is documented` : undefined
  if (!type || !response.content[type])
    return `${where}: content type ${type} is not documented (${Object.keys(response.content).join(', ')})`
  const schemaPath = operation.responses[responseKey].$ref
    ? `${operation.responses[responseKey].$ref.slice(2)}/content/${pointer([type])}/schema`
    : `paths/${pointer([path, method.toLowerCase()])}/responses/${responseKey}/content/${pointer([type])}/schema`
  if (!response.content[type].schema) return undefined
  let validate = validators.get(schemaPath)
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi#/${schemaPath}` })
    validators.set(schemaPath, validate)
  }
  let parsed: unknown = body
  if (type.endsWith('json')) {
    try {
      parsed = JSON.parse(body)
    } catch {
      return `${where}: the body is not JSON`
    }
  }
  if (validate(parsed)) return undefined
  return `${where}: ${ajv.errorsText(validate.errors)} in ${body.slice(0, 300)}`
}

/** Every example a component schema of the document shows that its own schema refuses, with why. */
export function exampleViolations(): string[] {
  return Object.entries((spec.components?.schemas ?? {}) as Record<string, Node>).flatMap(([name, schema]) => {
    const validate = ajv.compile({ $ref: `openapi#/components/schemas/${pointer([name])}` })
    return ((schema.examples ?? []) as unknown[]).flatMap((example, index) =>
      validate(example) ? [] : [`${name} example ${index}: ${ajv.errorsText(validate.errors)}`],
    )
  })
}

/** Checks every response `app` sends; call before app.ready(). Returns what it found, to drain after each test. */
export function watchContract(app: FastifyInstance): string[] {
  const violations: string[] = []
  app.addHook('onSend', (request, reply, payload, done) => {
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : ''
    const header = reply.getHeader('content-type')
    const violation = contractViolation(
      request.method,
      request.routeOptions.url,
      reply.statusCode,
      header === undefined ? undefined : String(header),
      body,
    )
    if (violation) violations.push(violation)
    done(null, payload)
  })
  return violations
}

const templates = Object.keys(spec.paths ?? {}).map((template) => ({
  route: template.replace(/\{(\w+)\}/g, ':$1'),
  pattern: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`),
}))

/**
 * The operation a concrete path is an instance of (/v1/charges/ch_… → /v1/charges/:id), as a route; none if no
 * operation has it.
 */
export function routeOf(pathname: string): string | undefined {
  return templates.find(({ pattern }) => pattern.test(pathname))?.route
}

/**
 * fetch, with each response checked against the document from outside: for servers run as child processes, where
 * watchContract cannot hook in. What is wrong is pushed to `violations`; the response is handed back unread.
 */
export function contractFetch(violations: string[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init)
    const url = new URL(input instanceof Request ? input.url : String(input))
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET')
    const body = await response.clone().text()
    const violation = contractViolation(
      method,
      routeOf(url.pathname),
      response.status,
      response.headers.get('content-type') ?? undefined,
      body,
    )
    if (violation) violations.push(violation)
    return response
  }
}
