// openapi.yaml, built from the routes themselves: each route's path, method and validation schemas (TypeBox, the
// very ones requests are checked with), its Idempotency-Key, its `openapi` entry (src/openapi/operation.ts), and
// the problems its shape implies. Nothing of a resource is written twice: `npm run openapi` writes the file, and
// test/openapi.test.ts fails when the committed one differs from what the routes say.
import type { FastifyContextConfig, FastifyInstance } from 'fastify'
import type { TSchema } from 'typebox'
import { stringify } from 'yaml'
import { PROBLEM_TYPE_BASE } from '../problems.js'
import { PROBLEM_TYPES, type ProblemType } from '../schemas/problem-types.js'
import { Event } from '../schemas/webhook.js'
import { IDEMPOTENCY_KEY_PARAMETER, INFO, REFERENCE_PAGE, SECURITY_SCHEMES, SERVERS, TAGS, webhooks } from './frame.js'
import type { OperationDoc } from './operation.js'
import { operationProse } from './prose.js'
import { headerComponents, problemResponses, successResponse, type HeaderName } from './responses.js'
import { type JsonSchema, SchemaComponents } from './schemas.js'

export interface DocumentedRoute {
  method: string
  /** As Fastify has it: /v1/charges/:id. */
  url: string
  schema: { params?: TSchema; querystring?: TSchema; body?: TSchema }
  idempotency?: FastifyContextConfig['idempotency']
  doc: OperationDoc
}

/** The headers a raw-body route reads (a processor's signature): printable ASCII, as such headers are. */
const SIGNATURE_HEADER = { type: 'string', pattern: '^[\\x20-\\x7e]*$' }

/** Collects each route with an `openapi` entry as it is added; call before the routes are registered. */
export function collectDocumentedRoutes(app: FastifyInstance): DocumentedRoute[] {
  const routes: DocumentedRoute[] = []
  app.addHook('onRoute', (route) => {
    const doc = route.config?.openapi
    if (!doc) return
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD')
        routes.push({
          method,
          url: route.url,
          schema: (route.schema ?? {}) as DocumentedRoute['schema'],
          idempotency: route.config?.idempotency,
          doc,
        })
    }
  })
  return routes
}

export function openapiDocument(routes: DocumentedRoute[], prose = operationProse()): JsonSchema {
  const components = new SchemaComponents()
  const paths: Record<string, Record<string, JsonSchema>> = {}
  for (const route of routes) {
    const path = route.url.replace(/:(\w+)/g, '{$1}')
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route, components, prose) }
  }
  const operations = new Set(routes.map((route) => route.doc.operationId))
  const strays = [...prose.keys()].filter((operationId) => !operations.has(operationId))
  if (strays.length) throw new Error(`src/routes/*.md describes operations no route has: ${strays.join(', ')}`)
  paths['/docs'] = {
    get: {
      ...REFERENCE_PAGE,
      responses: { ...REFERENCE_PAGE.responses, ...problemResponses(['malformed-request'], components) },
    },
  }
  const event = components.write(Event)
  const problem = components.schemas.Problem
  if (problem) {
    const types = Object.keys(PROBLEM_TYPES).join(', ')
    problem.description =
      `RFC 9457 problem details. \`type\` is always \`${PROBLEM_TYPE_BASE}\` followed by one of: ` + `${types}.`
  }
  const document = {
    openapi: '3.1.0',
    info: INFO,
    servers: SERVERS,
    tags: [...new Set(routes.map((route) => route.doc.tag))].map((name) => ({
      name,
      ...(TAGS[name] && { description: TAGS[name] }),
    })),
    security: [{ apiKey: [] }],
    paths,
    webhooks: webhooks(event),
  }
  const sections = {
    securitySchemes: SECURITY_SCHEMES,
    parameters: { IdempotencyKey: IDEMPOTENCY_KEY_PARAMETER },
    headers: headerComponents(JSON.stringify(document)),
    schemas: components.schemas,
  }
  return { ...document, components: sections }
}

/** The document as the committed openapi.yaml has it. */
export function openapiYaml(document: JsonSchema): string {
  const header =
    "# Built from the routes (src/openapi, the routes' `openapi` entries, the TypeBox schemas) by `npm run " +
    'openapi`: do not edit.\n'
  return header + stringify(document, { lineWidth: 120, aliasDuplicateObjects: false })
}

function operation(route: DocumentedRoute, components: SchemaComponents, prose: Map<string, string>): JsonSchema {
  const { doc, schema } = route
  if (doc.description !== undefined && prose.has(doc.operationId))
    throw new Error(`${doc.operationId} is described both in its route and in src/routes/*.md`)
  const description = doc.description ?? prose.get(doc.operationId)
  const headers: HeaderName[] = [
    ...(doc.public ? [] : (['RateLimit', 'RateLimit-Policy'] as const)),
    ...(route.idempotency ? (['Idempotent-Replayed'] as const) : []),
  ]
  const successes = Object.entries(doc.responses).map(
    ([status, answer]) => [status, successResponse(answer, components, headers)] as const,
  )
  const parameters = [
    ...parametersOf(schema.params, 'path', components),
    ...parametersOf(schema.querystring, 'query', components),
    ...(route.idempotency ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
    ...Object.entries(doc.rawBody?.headers ?? {}).map(([name, description]) => ({
      name,
      in: 'header',
      description,
      schema: SIGNATURE_HEADER,
    })),
  ]
  const responses = Object.fromEntries(
    [...successes, ...Object.entries(problemResponses(impliedProblems(route), components))].sort(
      ([a], [b]) => Number(a) - Number(b),
    ),
  )
  return {
    tags: [doc.tag],
    operationId: doc.operationId,
    summary: doc.summary,
    ...(description && { description }),
    ...(doc.client && { 'x-client': doc.client }),
    ...(doc.public && { security: [] }),
    ...(parameters.length && { parameters }),
    ...(schema.body && { requestBody: requestBody(schema.body, doc, components) }),
    ...(doc.rawBody && {
      requestBody: {
        required: true,
        description: doc.rawBody.description,
        content: { 'application/json': { schema: { type: 'object' } } },
      },
    }),
    responses,
  }
}

function requestBody(body: TSchema, doc: OperationDoc, components: SchemaComponents): JsonSchema {
  const media = { schema: components.write(body), ...(doc.bodyExample !== undefined && { example: doc.bodyExample }) }
  return {
    ...(doc.bodyOptional && { description: 'Optional: no body, or an empty one, is `{}`.' }),
    required: !doc.bodyOptional,
    content: { 'application/json': media },
  }
}

/** Path or query parameters, one per property of the route's schema; a property's description is the parameter's. */
function parametersOf(
  object: TSchema | undefined,
  location: 'path' | 'query',
  components: SchemaComponents,
): JsonSchema[] {
  if (!object) return []
  const { properties = {}, required = [] } = JSON.parse(JSON.stringify(object)) as {
    properties?: Record<string, JsonSchema>
    required?: string[]
  }
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...parameterSchema } = components.write(property)
    return {
      name,
      in: location,
      ...(description !== undefined && { description }),
      ...((location === 'path' || required.includes(name)) && { required: true }),
      schema: parameterSchema,
    }
  })
}

/**
 * Every problem the route can answer: those its shape implies (an API key, parameters, a body, an Idempotency-Key,
 * a list's cursor) and those its entry names (a decline, a refusal of the processor, a rule of the resource).
 */
function impliedProblems({ doc, schema, idempotency }: DocumentedRoute): Set<ProblemType> {
  const problems = new Set<ProblemType>(['malformed-request', 'internal-error'])
  const add = (...types: ProblemType[]) => {
    for (const type of types) problems.add(type)
  }
  if (!doc.public) add('unauthorized', 'rate-limited', 'service-unavailable')
  if (schema.params || schema.querystring) add('validation-failed')
  if (schema.params) add('resource-not-found')
  if (schema.querystring && 'starting_after' in ((schema.querystring as { properties?: object }).properties ?? {}))
    add('cursor-not-found')
  if (schema.body) add('validation-failed', 'body-too-large', 'unsupported-media-type', 'request-timeout')
  if (idempotency)
    add('idempotency-key-invalid', 'idempotency-request-in-flight', 'idempotency-key-reused', 'concurrent-update')
  if (idempotency?.required) add('idempotency-key-required')
  add(...(doc.problems ?? []))
  return problems
}
