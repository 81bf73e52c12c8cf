// Every route the document says is idempotent is idempotent in fact: the declaration (config.idempotency, which
// the OpenAPI document reads) and the handler's reply.idempotent are two lines of one route, and this holds
// them together. A route that declares a required key but writes without reply.idempotent would charge twice on
// a retry; here it answers something other than 400 and fails. A handler that calls reply.idempotent without
// the declaration fails on its first request (tested below).
import Fastify, { type FastifyBaseLogger } from 'fastify'
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import auth from '../../src/plugins/auth.js'
import errorHandler from '../../src/plugins/error-handler.js'
import idempotency from '../../src/plugins/idempotency.js'
import { useTestApp } from '../helpers/app.js'

const suite = useTestApp()

interface DocumentedOperation {
  operationId: string
  parameters?: { $ref?: string; in?: string; schema?: { $ref?: string; pattern?: string } }[]
  requestBody?: { content: Record<string, { example?: unknown }> }
}
type Document = {
  paths: Record<string, Record<string, DocumentedOperation>>
  components: { schemas: Record<string, { pattern?: string }> }
}

/** A well-formed id for each path parameter (its schema's pattern names the prefix), of nothing that exists. */
function pathOf(document: Document, path: string, operation: DocumentedOperation): string {
  let url = path
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in !== 'path') continue
    const ref = parameter.schema?.$ref
    const pattern = ref ? document.components.schemas[ref.split('/').pop() ?? '']?.pattern : parameter.schema?.pattern
    const prefix = pattern?.match(/^\^([a-z]+)_/)?.[1]
    if (!prefix) throw new Error(`${path}: no id pattern for a path parameter`)
    url = url.replace(/\{[^}]+\}/, `${prefix}_${'0'.repeat(24)}`)
  }
  return url
}

describe('idempotent routes', () => {
  it('when any route documented with a required Idempotency-Key is sent without one, then 400 idempotency-key-required and nothing is written', async () => {
    const document = (await suite.context.app.inject({ method: 'GET', url: '/openapi.json' })).json() as Document
    const idempotent = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) =>
          operation.parameters?.some((parameter) => parameter.$ref === '#/components/parameters/IdempotencyKey'),
        )
        .map(([method, operation]) => ({ method, path, operation })),
    )
    const writes = async () =>
      (
        await suite.context.sql<{ count: number }[]>`
          select (select count(*) from charges) + (select count(*) from refunds) + (select count(*) from events)
               + (select count(*) from webhook_endpoints) + (select count(*) from idempotency_keys) as count`
      )[0]?.count
    const before = await writes()

    const answers = []
    for (const { method, path, operation } of idempotent) {
      const example = operation.requestBody?.content['application/json']?.example
      const response = await suite.context.app.inject({
        method: method.toUpperCase() as 'POST',
        url: pathOf(document, path, operation),
        headers: { authorization: `Bearer ${suite.account.apiKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify(example ?? {}),
      })
      answers.push({ operation: operation.operationId, status: response.statusCode, type: response.json().type })
    }

    expect(idempotent.map(({ operation }) => operation.operationId)).toEqual(
      expect.arrayContaining(['createCharge', 'captureCharge', 'voidCharge', 'createRefund', 'createWebhookEndpoint']),
    )
    for (const answer of answers)
      expect(answer).toEqual({
        operation: answer.operation,
        status: 400,
        type: expect.stringMatching(/\/idempotency-key-required$/),
      })
    expect(await writes()).toBe(before)
  })

  it('when a handler calls reply.idempotent on a route that does not declare it, then its request fails as a defect of the route', async () => {
    const app = Fastify({ loggerInstance: pino({ level: 'silent' }) as FastifyBaseLogger })
    await app.register(errorHandler)
    await app.register(auth, { sql: suite.context.sql })
    await app.register(idempotency, {
      sql: suite.context.sql,
      timing: { ttlSeconds: 600, leaseSeconds: 30, recoveryGraceSeconds: 60 },
    })
    await app.register(async (scope) => {
      scope.addHook('onRequest', scope.authenticate)
      scope.post('/undeclared', async (_request, reply) =>
        reply.idempotent((operation) => operation.complete(async () => ({ status: 201, body: {} }))),
      )
    })
    const response = await app.inject({
      method: 'POST',
      url: '/undeclared',
      headers: { authorization: `Bearer ${suite.account.apiKey}`, 'idempotency-key': 'undeclared-1' },
      payload: {},
    })
    await app.close()

    expect(response.statusCode).toBe(500)
    const [keys] = await suite.context.sql<{ count: number }[]>`
      select count(*)::int as count from idempotency_keys where key = 'undeclared-1'`
    expect(keys?.count).toBe(0)
  })
})
