// The answers of an operation in openapi.yaml: the successful ones a route declares, and every problem it can
// answer, grouped by status, described and typed from the problem types' own declaration
// (src/schemas/problem-types.ts), with the headers each comes with.
import { PROBLEM_TYPES, type ProblemType, type ProblemTypeSpec } from '../schemas/problem-types.js'
import { ProblemSchema } from '../schemas/common.js'
import type { TSchema } from 'typebox'
import type { JsonSchema, SchemaComponents } from './schemas.js'

export const PROBLEM_CONTENT = 'application/problem+json'

/** The response headers the document names, once each (#/components/headers). */
export const HEADERS = {
  'X-Request-Id': {
    description: 'The request id in the server’s logs; a valid incoming `X-Request-Id` is reused.',
    schema: { type: 'string' },
  },
  RateLimit: {
    description:
      'draft-ietf-httpapi-ratelimit-headers: what is left of the account’s quota, e.g. `"account";r=5999;t=42` (r ' +
      'requests, for t more seconds).',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: 'The quota policy, e.g. `"account";q=6000;w=60` (q requests per w seconds, per instance).',
    schema: { type: 'string' },
  },
  'Idempotent-Replayed': {
    description: '`true` when this response is a replay of the one recorded for the key; absent otherwise.',
    schema: { type: 'string', const: 'true' },
  },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
  Location: { description: 'The path of the created resource.', schema: { type: 'string' } },
  'WWW-Authenticate': {
    description: 'How to authenticate.',
    schema: { type: 'string', const: 'Bearer realm="payments"' },
  },
  Allow: { description: 'The methods the path takes.', schema: { type: 'string' } },
} as const
export type HeaderName = keyof typeof HEADERS

/** A successful answer. */
export interface Answer {
  description: string
  /** Its body; none for an empty answer. */
  schema?: TSchema | JsonSchema
  /** application/json unless said. */
  contentType?: string
  headers?: readonly HeaderName[]
}

const headerRefs = (names: Iterable<HeaderName>) =>
  Object.fromEntries(
    [...new Set(names)].map((name) => [name, { $ref: `#/components/headers/${name.replaceAll('-', '')}` }]),
  )

/** A successful answer: its schema, content type and headers (X-Request-Id always; the rest as `extra` says). */
export function successResponse(answer: Answer, components: SchemaComponents, extra: HeaderName[]): JsonSchema {
  return {
    description: answer.description,
    headers: headerRefs(['X-Request-Id', ...extra, ...(answer.headers ?? [])]),
    ...(answer.schema && {
      content: { [answer.contentType ?? 'application/json']: { schema: components.write(answer.schema) } },
    }),
  }
}

/** The problem responses for these types, one per status, each naming its types and what they mean. */
export function problemResponses(
  types: Iterable<ProblemType>,
  components: SchemaComponents,
): Record<string, JsonSchema> {
  const byStatus = new Map<number, ProblemType[]>()
  for (const type of types)
    byStatus.set(PROBLEM_TYPES[type].status, [...(byStatus.get(PROBLEM_TYPES[type].status) ?? []), type])
  const responses: Record<string, JsonSchema> = {}
  for (const [status, each] of [...byStatus].sort(([a], [b]) => a - b)) {
    const specs = each.map((type) => [type, PROBLEM_TYPES[type] as ProblemTypeSpec] as const)
    const schemas = [
      ...new Map(
        specs.map(([type, spec]) => [spec.extensions ? type : 'plain', problemSchema(type, spec, components)]),
      ).values(),
    ]
    responses[status] = {
      description: specs.map(([type, spec]) => `\`${type}\`: ${spec.description}`).join('\n\n'),
      headers: headerRefs([
        'X-Request-Id',
        ...specs.flatMap(
          ([, spec]) =>
            (spec.headers ?? []).flatMap((name) =>
              name === 'RateLimit' ? ['RateLimit', 'RateLimit-Policy'] : [name],
            ) as HeaderName[],
        ),
      ]),
      content: { [PROBLEM_CONTENT]: { schema: schemas.length === 1 ? schemas[0] : { anyOf: schemas } } },
    }
  }
  return responses
}

/** Problem, or, for a type that adds members, a component of its own: CardDeclinedProblem. */
function problemSchema(type: ProblemType, spec: ProblemTypeSpec, components: SchemaComponents): JsonSchema {
  const problem = components.write(ProblemSchema)
  if (!spec.extensions) return problem
  const name = `${type.replace(/(^|-)(\w)/g, (_match, _dash, letter: string) => letter.toUpperCase())}Problem`
  return components.define(name, { allOf: [problem, { type: 'object', ...spec.extensions }] })
}

/** The headers section of the components: each header the document (as JSON text) refers to. */
export function headerComponents(document: string): Record<string, JsonSchema> {
  const component = (name: string) => name.replaceAll('-', '')
  return Object.fromEntries(
    Object.entries(HEADERS)
      .filter(([name]) => document.includes(`"#/components/headers/${component(name)}"`))
      .map(([name, header]) => [component(name), header]),
  )
}
