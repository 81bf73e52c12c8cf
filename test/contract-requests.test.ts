// The other direction of the contract (test/helpers/contract.ts checks responses): requests generated from
// openapi.yaml. Every body the document calls invalid, the server refuses with a 400 (validation-failed, or
// webhook-url-refused for a URL that is not one); every
// valid variation of a valid body, it does not refuse for its shape. Generated from each operation's body schema:
// one mutation per constraint of each property (type, range, length, pattern, enum, unknown field, required).
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { chargeBody, useTestApp, type TestAccount } from './helpers/app.js'

const spec = parse(await readFile(new URL('../openapi.yaml', import.meta.url), 'utf8'))
const suite = useTestApp({ config: { WEBHOOK_ALLOW_PRIVATE_URLS: true } })

type Schema = {
  $ref?: string; type?: string | string[]; properties?: Record<string, Schema>; required?: string[]; additionalProperties?: boolean | Schema
  minimum?: number; maximum?: number; minLength?: number; maxLength?: number; pattern?: string; enum?: unknown[]; allOf?: Schema[]
  anyOf?: Schema[]; items?: Schema; minItems?: number; maxItems?: number; maxProperties?: number; format?: string; const?: unknown
}

function resolve(schema: Schema): Schema {
  if (schema.$ref) return resolve(spec.components.schemas[schema.$ref.split('/').pop()!])
  if (schema.allOf?.length === 1 && !schema.type) return { ...resolve(schema.allOf[0]!), ...schema, allOf: undefined }
  return schema
}

/** Values the schema forbids, each with why. */
function invalidValues(raw: Schema): [string, unknown][] {
  const schema = resolve(raw)
  const types = [schema.type ?? []].flat()
  const out: [string, unknown][] = []
  if (types.includes('string')) {
    if (!types.includes('integer') && !types.includes('number')) out.push(['a number for a string', 12345])
    if (schema.maxLength !== undefined) out.push([`longer than ${schema.maxLength}`, 'a'.repeat(schema.maxLength + 1)])
    if (schema.minLength) out.push(['empty', ''])
    if (schema.pattern) for (const text of ['!', 'has space', '']) if (!new RegExp(schema.pattern).test(text)) out.push([`not matching ${schema.pattern}: ${JSON.stringify(text)}`, text])
    if (schema.enum) out.push(['not in the enum', 'not-a-value'])
    if (schema.format === 'uri') out.push(['not a URI', 'not a uri'])
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
  if (types.length === 0 && schema.enum) out.push(['not in the enum', 'not-a-value'])
  return out
}

interface Operation {
  name: string
  url: (user: TestAccount) => Promise<string>
  method: 'POST' | 'PATCH'
  schemaOf: () => Schema
  /** A body the server accepts; each mutation changes one property of it. */
  valid: Record<string, unknown>
}

const bodySchema = (path: string, method: string) => () => resolve(spec.paths[path][method].requestBody.content['application/json'].schema)
const newCharge = async (user: TestAccount, extra = {}) => (await user.post('/v1/charges', chargeBody(extra))).json().id as string
const newEndpoint = async (user: TestAccount) => (await user.post('/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks', enabled_events: ['*'] })).json().id as string

const operations: Operation[] = [
  { name: 'createCharge', method: 'POST', url: async () => '/v1/charges', schemaOf: bodySchema('/v1/charges', 'post'), valid: { ...chargeBody(), description: 'd', metadata: { order: '1' }, capture: true } },
  { name: 'captureCharge', method: 'POST', url: async (user) => `/v1/charges/${await newCharge(user, { capture: false })}/capture`, schemaOf: bodySchema('/v1/charges/{id}/capture', 'post'), valid: { amount_cents: 100 } },
  { name: 'createRefund', method: 'POST', url: async (user) => `/v1/charges/${await newCharge(user)}/refunds`, schemaOf: bodySchema('/v1/charges/{id}/refunds', 'post'), valid: { amount_cents: 100 } },
  {
    name: 'createWebhookEndpoint',
    method: 'POST',
    url: async () => '/v1/webhook_endpoints',
    schemaOf: bodySchema('/v1/webhook_endpoints', 'post'),
    valid: { url: 'http://127.0.0.1:9/hooks', enabled_events: ['charge.succeeded'], description: 'd' },
  },
  {
    name: 'updateWebhookEndpoint',
    method: 'PATCH',
    url: async (user) => `/v1/webhook_endpoints/${await newEndpoint(user)}`,
    schemaOf: bodySchema('/v1/webhook_endpoints/{id}', 'patch'),
    valid: { url: 'http://127.0.0.1:9/other', enabled_events: ['*'], description: 'd', disabled: false },
  },
]

const send = (user: TestAccount, method: 'POST' | 'PATCH', url: string, body: unknown) =>
  suite.context.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${user.apiKey}`, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
    payload: JSON.stringify(body),
  })

describe.each(operations)('$name, generated from openapi.yaml', (operation) => {
  it('when the body is the valid one, then it is not refused for its shape', async () => {
    const user = await suite.context.newAccount()
    const response = await send(user, operation.method, await operation.url(user), operation.valid)
    expect(response.statusCode, response.body).toBeLessThan(300)
  })

  it('when one property breaks one of its documented constraints, or a required one is missing, or an unknown one is added, then 400', async () => {
    const user = await suite.context.newAccount()
    const schema = operation.schemaOf()
    const cases: [string, Record<string, unknown>][] = []
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      for (const [why, value] of invalidValues(property)) cases.push([`${name}: ${why}`, { ...operation.valid, [name]: value }])
    }
    for (const name of schema.required ?? []) {
      const { [name]: _omitted, ...rest } = operation.valid
      cases.push([`${name} missing`, rest])
    }
    if (schema.additionalProperties === false) cases.push(['an unknown field', { ...operation.valid, zz_unknown: 1 }])
    expect(cases.length).toBeGreaterThan(3)
    for (const [why, body] of cases) {
      const response = await send(user, operation.method, await operation.url(user), body)
      // A webhook URL that is not a URL is refused by the URL policy, with its own documented 400.
      expect({ why, status: response.statusCode, type: response.json().type }).toEqual({ why, status: 400, type: expect.stringMatching(/\/(validation-failed|webhook-url-refused)$/) })
    }
  })
})
