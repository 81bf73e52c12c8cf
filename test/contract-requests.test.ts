/// <reference types="vite/client" />
// The other direction of the contract (test/helpers/contract.ts checks responses): requests generated from
// openapi.yaml. Every body, query parameter and path parameter the document calls invalid, the server refuses
// with a 400 (validation-failed, or webhook-url-refused for a URL that is not one): one mutation per constraint
// of each property (type, range, length, pattern, enum, format, unknown field, required). Every request the
// document calls valid, generated at random from its schemas (fast-check), the server does not refuse for its
// shape: no validation-failed, no 5xx.
import { readFile } from 'node:fs/promises'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { useTestApp, type TestAccount } from './helpers/app.js'
import type { ContractFixture } from './contract-fixtures/fixture.js'

const spec = parse(await readFile(new URL('../openapi.yaml', import.meta.url), 'utf8'))
// A charge's money is available at once: a fork's resource that spends the balance (docs/extending.md's payouts)
// is funded by a charge, with no clock to move.
const suite = useTestApp({ config: { WEBHOOK_ALLOW_PRIVATE_URLS: true, FUNDS_AVAILABLE_AFTER_DAYS: 0 } })

type Schema = {
  $ref?: string
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  additionalProperties?: boolean | Schema
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  enum?: unknown[]
  allOf?: Schema[]
  anyOf?: Schema[]
  items?: Schema
  minItems?: number
  maxItems?: number
  maxProperties?: number
  minProperties?: number
  format?: string
  const?: unknown
  uniqueItems?: boolean
  propertyNames?: Schema
  not?: Schema
}

function resolve(schema: Schema): Schema {
  if (schema.$ref) return resolve(spec.components.schemas[schema.$ref.split('/').pop()!])
  if (schema.allOf?.length === 1 && !schema.type) return { ...resolve(schema.allOf[0]!), ...schema, allOf: undefined }
  return schema
}

const digits = (count: number, max = 10 ** count - 1) =>
  fc.integer({ min: 0, max }).map((value) => String(value).padStart(count, '0'))
/** Any date-time RFC 3339 §5.6 admits (leap seconds aside): years 0000–9999, offsets to ±23:59, any fraction. */
const rfc3339DateTime = fc
  .tuple(
    digits(4),
    fc.integer({ min: 1, max: 12 }),
    fc.integer({ min: 1, max: 28 }),
    fc.constantFrom('T', 't'),
    fc.tuple(digits(2, 23), digits(2, 59), digits(2, 59)),
    fc.option(fc.stringMatching(/^[0-9]{1,12}$/)),
    fc.oneof(fc.constantFrom('Z', 'z'), fc.tuple(fc.constantFrom('+', '-'), digits(2, 23), digits(2, 59))),
  )
  .map(([year, month, day, t, [hour, minute, second], fraction, offset]) => {
    const zone = typeof offset === 'string' ? offset : `${offset[0]}${offset[1]}:${offset[2]}`
    const date = `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`
    return `${date}${t}${hour}:${minute}:${second}${fraction ? `.${fraction}` : ''}${zone}`
  })

/** Values the schema forbids, each with why. */
function invalidValues(raw: Schema): [string, unknown][] {
  const schema = resolve(raw)
  const types = [schema.type ?? []].flat()
  const out: [string, unknown][] = []
  if (types.includes('string')) {
    if (!types.includes('integer') && !types.includes('number')) out.push(['a number for a string', 12345])
    if (schema.maxLength !== undefined) out.push([`longer than ${schema.maxLength}`, 'a'.repeat(schema.maxLength + 1)])
    if (schema.minLength) out.push(['empty', ''])
    if (schema.pattern)
      for (const text of ['!', 'has space', ''])
        if (!new RegExp(schema.pattern).test(text))
          out.push([`not matching ${schema.pattern}: ${JSON.stringify(text)}`, text])
    const barred = schema.not?.pattern
    if (barred)
      for (const text of ['a\u0000b', '\u0000'])
        if (new RegExp(barred, 'u').test(text))
          out.push([`matching the barred ${barred}: ${JSON.stringify(text)}`, text])
    if (schema.enum) out.push(['not in the enum', 'not-a-value'])
    if (schema.format === 'uri') out.push(['not a URI', 'not a uri'])
    if (schema.format === 'date-time')
      out.push(
        ['not a date-time', 'yesterday'],
        ['a date-time without its offset', '2026-01-01T00:00:00'],
        ['a date-time with a time-zone suffix (RFC 9557, not RFC 3339)', '2026-01-01T00:00:00Z[Europe/Paris]'],
      )
  }
  if (types.includes('integer')) {
    out.push(['a string for an integer', '100'], ['a fraction', 1.5])
    if (schema.minimum !== undefined) out.push([`below ${schema.minimum}`, schema.minimum - 1])
    if (schema.maximum !== undefined) out.push([`above ${schema.maximum}`, schema.maximum + 1])
  }
  if (types.includes('boolean')) out.push(['a string for a boolean', 'true'])
  if (types.includes('array')) {
    out.push(['an object for an array', {}])
    if (schema.minItems) out.push(['an empty array', []])
  }
  if (types.includes('object') && schema.additionalProperties !== undefined) out.push(['an array for an object', []])
  // Keys built with JSON.parse: in an object literal, __proto__ would set the prototype instead of naming a key.
  const names = schema.propertyNames
  const keyed = (key: string) => JSON.parse(`{${JSON.stringify(key)}:""}`) as unknown
  if (names?.pattern && !new RegExp(names.pattern).test('has space'))
    out.push([`a key not matching ${names.pattern}`, keyed('has space')])
  if (typeof names?.not?.const === 'string') out.push([`a key named ${names.not.const}`, keyed(names.not.const)])
  if (types.length === 0 && schema.enum) out.push(['not in the enum', 'not-a-value'])
  return out
}

// Strings the server takes: whole graphemes (no lone surrogate) without NUL (docs/operations.md says why), counted in
// code points.
const text = (minLength = 0, maxLength = 40) =>
  fc.string({ unit: 'grapheme', minLength, maxLength }).filter((value) => [...value].length <= maxLength)

/** Any value the schema allows, for property-based tests. */
function arbitraryFor(raw: Schema): fc.Arbitrary<unknown> {
  const schema = resolve(raw)
  if (schema.const !== undefined) return fc.constant(schema.const)
  if (schema.enum) return fc.constantFrom(...schema.enum)
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map(arbitraryFor))
  const types = [schema.type ?? []].flat()
  if (types.length > 1) return fc.oneof(...types.map((type) => arbitraryFor({ ...schema, type })))
  switch (types[0]) {
    case 'null':
      return fc.constant(null)
    case 'boolean':
      return fc.boolean()
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 })
    case 'string': {
      const fits = (value: string) =>
        [...value].length >= (schema.minLength ?? 0) && [...value].length <= (schema.maxLength ?? Infinity)
      if (schema.format === 'uri') return fc.webUrl({ validSchemes: ['http', 'https'] }).filter(fits)
      if (schema.format === 'date-time') return rfc3339DateTime
      const admitted = (value: string) => !schema.not?.pattern || !new RegExp(schema.not.pattern, 'u').test(value)
      if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern)).filter(fits).filter(admitted)
      return text(schema.minLength, Math.min(schema.maxLength ?? 40, 40)).filter(admitted)
    }
    case 'array': {
      const settings = { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 5, 5) }
      const items = arbitraryFor(schema.items ?? {})
      return schema.uniqueItems
        ? fc.uniqueArray(items, { ...settings, selector: (value) => JSON.stringify(value) })
        : fc.array(items, settings)
    }
    case 'object': {
      if (!schema.properties && typeof schema.additionalProperties === 'object') {
        const names = schema.propertyNames
        const key = (names?.pattern ? fc.stringMatching(new RegExp(names.pattern)) : text(1, 40)).filter(
          (name) => names?.not?.const !== name,
        )
        return fc.dictionary(key, arbitraryFor(schema.additionalProperties), {
          maxKeys: Math.min(schema.maxProperties ?? 5, 5),
        })
      }
      const properties = Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([name, property]) => [name, arbitraryFor(property)]),
      )
      return fc
        .record(properties, { requiredKeys: schema.required ?? [] })
        .filter((value) => Object.keys(value).length >= (schema.minProperties ?? 0))
    }
    default:
      return fc.anything()
  }
}

/** A problem's type, without its base URL: validation-failed, not-found, ... */
const problemType = (body: string) => {
  try {
    return String((JSON.parse(body) as { type?: unknown }).type ?? '')
      .split('/')
      .pop()
  } catch {
    return undefined
  }
}

interface Operation {
  operationId: string
  path: string
  method: 'POST' | 'PATCH'
  schema: Schema
  bodyRequired: boolean
  example: Record<string, unknown> | undefined
}

/**
 * Every operation of the document that takes a body with a schema: each gets the tests below, with nothing listed by
 * hand. (The processor's webhook takes bytes it verifies by their signature: test/processor-events/ covers it.)
 */
const bodyOperations: Operation[] = Object.entries(
  // biome-ignore lint/suspicious/noExplicitAny: the parsed YAML's operations, read by what each holds
  spec.paths as Record<string, Record<string, Record<string, any>>>,
).flatMap(([path, methods]) =>
  Object.entries(methods)
    .filter(
      ([method, operation]) =>
        ['post', 'patch'].includes(method) && operation.requestBody?.content['application/json']?.schema?.$ref,
    )
    .map(([method, operation]) => ({
      operationId: operation.operationId as string,
      path,
      method: method.toUpperCase() as 'POST' | 'PATCH',
      schema: resolve(operation.requestBody.content['application/json'].schema),
      bodyRequired: operation.requestBody.required === true,
      example: operation.requestBody.content['application/json'].example,
    })),
)

/** Every resource's fixture (test/contract-fixtures/*.ts), merged: a fork's resource brings its own file. */
const fixtures: Required<ContractFixture> = { ids: {}, bodies: {}, prepare: {} }
for (const module of Object.values(
  import.meta.glob<{ fixture: ContractFixture }>('./contract-fixtures/*.ts', { eager: true }),
)) {
  if (!module.fixture) continue
  Object.assign(fixtures.ids, module.fixture.ids)
  Object.assign(fixtures.bodies, module.fixture.bodies)
  Object.assign(fixtures.prepare, module.fixture.prepare)
}

async function urlOf(user: TestAccount, operation: Operation): Promise<string> {
  let url = operation.path
  const parameters = (spec.paths[operation.path][operation.method.toLowerCase()].parameters ?? []) as {
    in: string
    name: string
    schema?: Schema
  }[]
  for (const parameter of parameters.filter((each) => each.in === 'path')) {
    const kind = parameter.schema!.$ref!.split('/').pop()!
    const fixture = fixtures.ids[kind]
    if (!fixture)
      throw new Error(
        `no fixture makes a ${kind} for ${operation.operationId}: add ids.${kind} to a file of test/contract-fixtures/`,
      )
    url = url.replace(`{${parameter.name}}`, await fixture(user, operation.operationId, suite.context.sql))
  }
  return url
}

function validBody(operation: Operation): Record<string, unknown> {
  const body = fixtures.bodies[operation.operationId] ?? operation.example ?? (operation.bodyRequired ? undefined : {})
  if (!body)
    throw new Error(`${operation.operationId} takes a body and its openapi entry gives no bodyExample: add one`)
  return body
}

const send = (user: TestAccount, method: 'POST' | 'PATCH', url: string, body: unknown) =>
  suite.context.app.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${user.apiKey}`,
      'content-type': 'application/json',
      'idempotency-key': crypto.randomUUID(),
    },
    payload: JSON.stringify(body),
  })

describe.each(bodyOperations)('$operationId, generated from openapi.yaml', (operation) => {
  it('when bodies are generated at random from its schema, then none is refused for its shape, and none fails', async () => {
    const user = await suite.context.newAccount()
    await fc.assert(
      fc.asyncProperty(arbitraryFor(operation.schema), async (body) => {
        const response = await send(user, operation.method, await urlOf(user, operation), body)
        expect({ body, status: response.statusCode, type: problemType(response.body) }).not.toMatchObject({
          type: expect.stringMatching(/^(validation-failed|malformed-request)$/),
        })
        expect(response.statusCode, response.body).toBeLessThan(500)
      }),
      { numRuns: 15 },
    )
  })

  it('when the body is the valid one, and what it needs exists, then it succeeds', async () => {
    const user = await suite.context.newAccount()
    await fixtures.prepare[operation.operationId]?.(user, suite.context.sql)
    const response = await send(user, operation.method, await urlOf(user, operation), validBody(operation))
    const needs = fixtures.prepare[operation.operationId]
      ? ''
      : ` (if it needs something to exist first, say what in prepare.${operation.operationId} of a file of ` +
        `test/contract-fixtures/)`
    expect(
      response.statusCode,
      `${operation.operationId} answered ${response.statusCode} to its valid body${needs}: ${response.body}`,
    ).toBeLessThan(300)
  })

  it('when one property breaks one of its documented constraints, or a required one is missing, or an unknown one is added, then 400', async () => {
    const user = await suite.context.newAccount()
    const { schema } = operation
    const valid = validBody(operation)
    const cases: [string, unknown][] = []
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      for (const [why, value] of invalidValues(property)) cases.push([`${name}: ${why}`, { ...valid, [name]: value }])
    }
    for (const name of schema.required ?? []) {
      const { [name]: _omitted, ...rest } = valid
      cases.push([`${name} missing`, rest])
    }
    if (schema.additionalProperties === false)
      cases.push(['an unknown field', { ...valid, zz_unknown: 1 }], ['not an object', [1, 2]])
    expect(cases.length).toBeGreaterThan(0)
    for (const [why, body] of cases) {
      const response = await send(user, operation.method, await urlOf(user, operation), body)
      // A webhook URL that is not a URL is refused by the URL policy, with its own documented 400.
      expect({ why, status: response.statusCode, type: response.json().type }).toEqual({
        why,
        status: 400,
        type: expect.stringMatching(/\/(validation-failed|webhook-url-refused)$/),
      })
    }
  })
})

interface Parameter {
  in: 'query' | 'path' | 'header'
  name: string
  schema: Schema
}

const readOperations = Object.entries(
  spec.paths as Record<string, Record<string, { parameters?: (Parameter & { $ref?: string })[] }>>,
).flatMap(([path, methods]) => {
  const parameters = (methods.get?.parameters ?? [])
    .map((parameter) =>
      parameter.$ref ? (spec.components.parameters[parameter.$ref.split('/').pop()!] as Parameter) : parameter,
    )
    .filter((parameter) => parameter.in !== 'header')
  return parameters.length ? [{ path, parameters }] : []
})

/** What the schema forbids, as a query or path parameter carries it: text (so not a wrong JSON type). */
function invalidParameterValues(schema: Schema): [string, string][] {
  const asText = invalidValues(schema).filter(
    ([why]) => !/^(a number for|a string for|an? (object|array|empty array) for)/.test(why),
  )
  if ([resolve(schema).type].flat().includes('integer')) asText.push(['not a number', 'ten'])
  return asText.map(([why, value]) => [why, String(value)])
}

describe.each(readOperations)('GET $path, its parameters generated from openapi.yaml', ({ path, parameters }) => {
  const byName = (name: string) => parameters.find((parameter) => parameter.name === name)!.schema
  const url = (query: Record<string, string>, pathValues: Record<string, string> = {}) => {
    const filled = path.replace(/\{(\w+)\}/g, (_, name: string) =>
      encodeURIComponent(pathValues[name] ?? String(fc.sample(arbitraryFor(byName(name)), 1)[0])),
    )
    const search = new URLSearchParams(query).toString()
    return search ? `${filled}?${search}` : filled
  }
  const get = (user: TestAccount, target: string) =>
    suite.context.app.inject({ method: 'GET', url: target, headers: { authorization: `Bearer ${user.apiKey}` } })

  it('when one parameter breaks one of its documented constraints, then 400 validation-failed', async () => {
    const user = await suite.context.newAccount()
    const cases: [string, string][] = []
    for (const parameter of parameters) {
      for (const [why, value] of invalidParameterValues(parameter.schema)) {
        cases.push([
          `${parameter.in} ${parameter.name}: ${why}`,
          parameter.in === 'path' ? url({}, { [parameter.name]: value }) : url({ [parameter.name]: value }),
        ])
      }
    }
    expect(cases.length).toBeGreaterThan(0)
    for (const [why, target] of cases) {
      const response = await get(user, target)
      expect({ why, status: response.statusCode, type: problemType(response.body) }).toEqual({
        why,
        status: 400,
        type: 'validation-failed',
      })
    }
  })

  it('when parameters are generated at random from their schemas, then none is refused for its shape, and none fails', async () => {
    const user = await suite.context.newAccount()
    const query = parameters.filter((parameter) => parameter.in === 'query')
    // A page is after one cursor or before another, not both: one of the two at most.
    const cursors = ['starting_after', 'ending_before']
    const values = fc.record(
      Object.fromEntries(query.map((parameter) => [parameter.name, arbitraryFor(parameter.schema).map(String)])),
      { requiredKeys: [] },
    )
    await fc.assert(
      fc.asyncProperty(values, async (chosen) => {
        if (cursors.every((name) => name in chosen)) delete chosen.ending_before
        const target = url(chosen as Record<string, string>)
        const response = await get(user, target)
        expect({ target, type: problemType(response.body) }).not.toMatchObject({ type: 'validation-failed' })
        expect(response.statusCode, `${target}: ${response.body}`).toBeLessThan(500)
      }),
      { numRuns: 15 },
    )
  })
})
