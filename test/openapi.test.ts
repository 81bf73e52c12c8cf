// openapi.yaml is built from the routes (npm run openapi, src/openapi): these checks keep the committed file the one
// the routes build, and what it says true of what the server does.
import { execFileSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import Fastify, { type RouteOptions } from 'fastify'
import { pino } from 'pino'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { appPlugin } from '../src/app.js'
import { CLIENT_API_FILE, formattedClientSource } from '../src/openapi/client-source.js'
import { loadConfig } from '../src/config.js'
import { parseIdempotencyKey } from '../src/idempotency/key.js'
import { PROBLEM_TYPES } from '../src/problems.js'
import { SUPPORTED_CURRENCIES } from '../src/schemas/common.js'
import { exampleViolations } from './helpers/contract.js'
import { SIMULATED_PREFIX } from '../src/routes/simulated-processor.js'
import { CreateChargeBody } from '../src/schemas/charge.js'
import { chargeBody, failOnContractViolations, setupTestApp, type TestContext } from './helpers/app.js'

const specText = await readFile(new URL('../openapi.yaml', import.meta.url), 'utf8')
const spec = parse(specText)
let context: TestContext

beforeAll(async () => {
  context = await setupTestApp()
})
afterEach(() => failOnContractViolations(context))
afterAll(() => context.close())

// biome-ignore lint/suspicious/noExplicitAny: the parsed YAML, walked by what each node holds
type Node = any

/**
 * Whether a string schema refuses NUL in every regular-expression engine that reads the document: by its values,
 * its format, a pattern that refuses it, or a pattern it must not match (`not`) that finds it. Each pattern is read
 * alike by ECMA-262 (with and without the u flag) and Python's re (checked in bulk, below), and names no surrogate,
 * which Rust's regex (jsonschema-rs) cannot compile.
 */
function refusesNul(schema: Node): boolean {
  if (schema.enum || schema.const !== undefined || schema.format === 'date-time') return true
  const readable = (pattern: unknown): pattern is string =>
    typeof pattern === 'string' && !/\\u[dD][89a-fA-F]/.test(pattern)
  const finds = (pattern: string) => ['', 'u'].map((flags) => new RegExp(pattern, flags).test('a\u0000b'))
  if (readable(schema.not?.pattern)) return finds(schema.not.pattern).every(Boolean)
  return readable(schema.pattern) && !finds(schema.pattern).some(Boolean)
}

/** How Python's re reads each pattern (as Schemathesis's generator does): [finds NUL, finds an emoji]. */
function inPython(patterns: string[]): [boolean, boolean][] {
  const program = `import json, re, sys
seen = [[re.search(p, "a\\x00b") is not None, re.search(p, "a\\U0001F600b") is not None] for p in json.load(sys.stdin)]
print(json.dumps(seen))`
  return JSON.parse(execFileSync('python3', ['-c', program], { input: JSON.stringify(patterns), encoding: 'utf8' }))
}

describe('openapi.yaml', () => {
  it('when the routes or schemas change, then the committed file is the one they build, or this says to run npm run openapi', async () => {
    const built = (await context.app.inject({ method: 'GET', url: '/openapi.yaml' })).body
    expect(built === specText, 'openapi.yaml is stale: run `npm run openapi` and commit the result').toBe(true)
  })

  it('when openapi.yaml changes, then the client generated from it is the committed one, or this says to run npm run openapi', async () => {
    const committed = await readFile(new URL(`../${CLIENT_API_FILE}`, import.meta.url), 'utf8')
    const generated = formattedClientSource(parse(specText))
    expect(generated === committed, `${CLIENT_API_FILE} is stale: run \`npm run openapi\` and commit the result`).toBe(
      true,
    )
  })

  it('when compared with the app, then it documents every route and no route that does not exist', async () => {
    const routes: string[] = []
    const app = Fastify({ loggerInstance: pino({ level: 'silent' }) })
    app.addHook('onRoute', (route: RouteOptions) => {
      // The reference page's own files (/docs/static/..., /docs/json) are its business, not the API's; so are the
      // simulated processor's pages (its 3-D Secure page, its controls), which stand for the processor.
      if (route.url.startsWith('/docs/') || route.url.startsWith(SIMULATED_PREFIX)) return
      for (const method of [route.method].flat())
        if (method !== 'HEAD') routes.push(`${method} ${route.url.replace(/:(\w+)/g, '{$1}')}`)
    })
    await app.register(appPlugin, { sql: context.sql, processor: context.processor, config: loadConfig({}) })
    await app.ready()
    await app.close()

    const documented = Object.entries(spec.paths as Record<string, object>).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    )
    expect(documented.sort()).toEqual(routes.sort())
  })

  it('when a $ref is followed, then it leads somewhere', () => {
    const refs: string[] = []
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk)
      else if (node && typeof node === 'object') {
        for (const [name, value] of Object.entries(node)) name === '$ref' ? refs.push(value as string) : walk(value)
      }
    }
    walk(spec)
    expect(refs.length).toBeGreaterThan(20)
    for (const ref of refs) {
      const target = ref
        .replace(/^#\//, '')
        .split('/')
        .reduce<Node>((node, segment) => node?.[segment], spec)
      expect(target, ref).toBeDefined()
    }
  })

  it('when a problem type exists, then the document names it', () => {
    for (const type of Object.keys(PROBLEM_TYPES)) expect(specText).toContain(type)
  })

  it('when a charge is created, then its fields are exactly the documented ones', async () => {
    const account = await context.newAccount()
    const charge = (await account.post('/v1/charges', chargeBody())).json()
    const refund = (await account.post(`/v1/charges/${charge.id}/refunds`, { amount_cents: 1 })).json()
    expect(Object.keys(charge).sort()).toEqual([...spec.components.schemas.Charge.required].sort())
    expect(Object.keys(refund).sort()).toEqual([...spec.components.schemas.Refund.required].sort())
  })

  it('when a schema shows an example (what reference pages and mock servers display), then the example is one its schema takes, and every resource has one', () => {
    expect(exampleViolations()).toEqual([])
    for (const resource of ['Charge', 'Refund', 'WebhookEndpoint'])
      expect(spec.components.schemas[resource].examples, resource).toHaveLength(1)
  })

  it('when a generator or fuzzer reads a request string, in any regex engine, then its schema refuses NUL, as the server does', () => {
    const open: string[] = []
    const walked: string[] = []
    const patterns = new Set<string>()
    const spelled: string[] = []
    const resolve = (node: Node): Node =>
      typeof node.$ref === 'string'
        ? resolve(
            node.$ref
              .split('/')
              .slice(1)
              .reduce((at: Node, part: string) => at[part], spec),
          )
        : node
    const visit = (node: Node, where: string, seen = new Set<Node>()): void => {
      node = resolve(node)
      if (seen.has(node)) return
      seen.add(node)
      if (node.type === 'string') {
        walked.push(where)
        for (const pattern of [node.pattern, node.not?.pattern]) if (typeof pattern === 'string') patterns.add(pattern)
        if (typeof node.pattern === 'string') spelled.push(node.pattern)
        if (!refusesNul(node)) open.push(where)
      }
      for (const [name, child] of Object.entries(node.properties ?? {})) visit(child as Node, `${where}.${name}`, seen)
      for (const key of ['items', 'additionalProperties'] as const)
        if (node[key] && typeof node[key] === 'object') visit(node[key], `${where}.${key}`, seen)
      for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
        for (const [index, child] of (node[key] ?? []).entries())
          visit(child as Node, `${where}.${key}[${index}]`, seen)
    }
    for (const [path, item] of Object.entries(spec.paths as Record<string, Record<string, Node>>)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const parameter of (operation.parameters ?? []) as Node[])
          visit(resolve(parameter).schema, `${method} ${path} ${resolve(parameter).name}`)
        const body = operation.requestBody && resolve(operation.requestBody).content?.['application/json']?.schema
        if (body) visit(body, `${method} ${path} body`)
      }
    }
    // Nested objects and maps are walked: the mandate's strings, metadata's values.
    expect(walked).toEqual(
      expect.arrayContaining([
        'post /v1/charges body.mandate.user_agent',
        'post /v1/charges body.metadata.additionalProperties',
      ]),
    )
    expect(open).toEqual([])
    // A fuzzer draws a string with a pattern from the pattern: one that admits any text leaves the generator's
    // regex engine to say what a character is (Rust's and Python's differ on surrogates). Free text bars NUL
    // instead (`not`), and every pattern spells a structured value.
    expect(spelled.filter((pattern) => new RegExp(pattern, 'u').test('a😀b'))).toEqual([])
    // Python's re reads every pattern as ECMA-262 does: what one refuses, the other refuses.
    const inJs = (pattern: string) => [new RegExp(pattern, 'u').test('a\u0000b'), new RegExp(pattern, 'u').test('a😀b')]
    expect(inPython([...patterns])).toEqual([...patterns].map(inJs))
  })

  it('when the request schemas change, then the document follows', () => {
    expect(Object.keys(spec.components.schemas.CreateCharge.properties).sort()).toEqual(
      Object.keys(CreateChargeBody.properties).sort(),
    )
    expect(spec.components.schemas.Currency.enum).toEqual([...SUPPORTED_CURRENCIES])
  })

  it('is served at /openapi.yaml as the file’s bytes', async () => {
    const response = await context.app.inject({ method: 'GET', url: '/openapi.yaml' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('text/yaml; charset=utf-8')
    expect(response.body).toBe(specText)
  })
})

describe('openapi.yaml says what the server enforces', () => {
  const headerSchema = spec.components.parameters.IdempotencyKey.schema as {
    pattern: string
    minLength: number
    maxLength: number
  }
  const documented = (value: string) =>
    value.length >= headerSchema.minLength &&
    value.length <= headerSchema.maxLength &&
    new RegExp(headerSchema.pattern).test(value)
  const accepted = (value: string) => {
    try {
      return parseIdempotencyKey(value) !== undefined
    } catch {
      return false
    }
  }

  it.each([
    'abc',
    '8e03978e-40d5-43e8-bc93-6894a57f9324',
    'a b',
    'charge:inv_1:attempt:2',
    'x'.repeat(255),
    'x'.repeat(256),
    '',
    '"quoted"',
    '"with \\"escaped\\" quotes"',
    '"back\\\\slash"',
    '""',
    '"unterminated',
    '"bad \\x escape"',
    '"inner " quote"',
    `"${'y'.repeat(255)}"`,
    `"${'y'.repeat(256)}"`,
    `"${'\\"'.repeat(255)}"`,
    'caf\u00e9',
    'tab\there',
    '"tab\there"',
  ])('when the Idempotency-Key is %j, then the document and the server agree on it', (value) => {
    expect(documented(value)).toBe(accepted(value))
  })

  it('when a list takes a cursor, then the document gives it that list’s id pattern', () => {
    const cursorPatterns = (operation: { parameters: { name?: string; schema?: { $ref: string } }[] }) =>
      operation.parameters
        .filter((parameter) => parameter.name === 'starting_after' || parameter.name === 'ending_before')
        .map((parameter) => spec.components.schemas[parameter.schema!.$ref.split('/').pop()!].pattern)
    expect(cursorPatterns(spec.paths['/v1/charges'].get)).toEqual(['^ch_[0-9a-f]{24}$', '^ch_[0-9a-f]{24}$'])
    expect(cursorPatterns(spec.paths['/v1/refunds'].get)).toEqual(['^re_[0-9a-f]{24}$', '^re_[0-9a-f]{24}$'])
    expect(cursorPatterns(spec.paths['/v1/charges/{id}/refunds'].get)).toEqual([
      '^re_[0-9a-f]{24}$',
      '^re_[0-9a-f]{24}$',
    ])
    expect(cursorPatterns(spec.paths['/v1/events'].get)).toEqual(['^evt_[0-9a-f]{24}$', '^evt_[0-9a-f]{24}$'])
    expect(cursorPatterns(spec.paths['/v1/webhook_endpoints'].get)).toEqual(['^we_[0-9a-f]{24}$', '^we_[0-9a-f]{24}$'])
  })

  it('when a documented cursor pattern is violated, then the server refuses it with 400, and accepts a well-formed one', async () => {
    const account = await context.newAccount()
    for (const [path, id] of [
      ['/v1/charges', 'ch_'],
      ['/v1/refunds', 're_'],
      ['/v1/events', 'evt_'],
      ['/v1/webhook_endpoints', 'we_'],
    ] as const) {
      expect((await account.get(`${path}?starting_after=${id}xyz`)).statusCode, path).toBe(400)
      expect((await account.get(`${path}?limit=1`)).statusCode, path).toBe(200)
    }
  })
})
