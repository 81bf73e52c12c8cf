// The typed client's resources, generated from openapi.yaml (src/client/api.ts, written by `npm run openapi` beside
// the document): each operation with an `x-client` ("charges.create") becomes that method, its path parameters,
// body, query and answer typed from the document's components; a list that pages (`starting_after`) also gets
// `all`, every item page after page. What holds an Idempotency-Key still across retries is not generated: the
// methods call src/client/client.ts's `Calls`, which does.
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { declarations, docComment, type Schema, typeOf } from './schema-types.js'

interface Parameter {
  name?: string
  in?: 'path' | 'query' | 'header'
  required?: boolean
  description?: string
  schema?: Schema
  $ref?: string
}

interface Operation {
  operationId: string
  summary: string
  'x-client'?: string
  parameters?: Parameter[]
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> }
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>
}

interface Document {
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, Schema> }
}

const IDEMPOTENCY_KEY = '#/components/parameters/IdempotencyKey'
const EVERY_ITEM = 'Every item of the list, newest first, page after page: each page fetched when it is needed.'

export const CLIENT_API_FILE = 'src/client/api.ts'

/** src/client/api.ts for this document, as the repository's formatter leaves it (the file is committed). */
export function formattedClientSource(document: Document): string {
  const biome = createRequire(import.meta.url).resolve('@biomejs/biome/bin/biome')
  return execFileSync(process.execPath, [biome, 'format', `--stdin-file-path=${CLIENT_API_FILE}`], {
    input: clientSource(document),
    encoding: 'utf8',
  })
}

/** The source of src/client/api.ts for this document. */
function clientSource(document: Document): string {
  const components = document.components.schemas
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => operation['x-client'] !== undefined)
      .map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
  )
  const queries: Record<string, Schema> = {}
  const resources = new Map<string, string[]>()
  for (const { path, method, operation } of operations) {
    const [resource, name, ...rest] = (operation['x-client'] as string).split('.')
    if (!resource || !name || rest.length)
      throw new Error(`${operation.operationId}: x-client "${operation['x-client']}" is not "resource.method"`)
    const query = queryOf(operation)
    const queryType = query && `${capitalized(operation.operationId)}Query`
    if (query && queryType) queries[queryType] = query
    const methods = resources.get(resource) ?? []
    methods.push(...methodSource(path, method, operation, name, queryType, components))
    resources.set(resource, methods)
  }
  const used = reachable([...operations.map(({ operation }) => operation), ...Object.values(queries)], components)
  const types = Object.fromEntries(Object.entries(components).filter(([name]) => used.has(name)))
  const body = [...resources].map(([resource, methods]) => `    ${resource}: {\n${methods.join('\n')}\n    },`)
  return `// Generated from openapi.yaml by \`npm run openapi\` (src/openapi/client-source.ts): do not edit. The types
// are the document's components, the methods its operations that name an x-client; src/client/client.ts calls out.
import type { ApiResponse, CallOptions, IdempotentCallOptions } from './transport.js'

/** What the generated methods call: src/client/client.ts makes them, holding each Idempotency-Key still. */
export interface Calls {
  post<T>(path: string, body: unknown, options?: IdempotentCallOptions): Promise<ApiResponse<T>>
  get<T>(path: string, query?: object, options?: CallOptions): Promise<ApiResponse<T>>
  send<T>(method: 'PATCH' | 'DELETE', path: string, body: unknown, options?: CallOptions): Promise<ApiResponse<T>>
  each<T>(path: string, query?: object, options?: CallOptions): AsyncGenerator<T>
}

${declarations(types)}
${declarations(queries)}
/** The API's resources, as methods. */
export function resources(calls: Calls) {
  const id = (value: string) => encodeURIComponent(value)
  return {
${body.join('\n')}
  }
}
`
}

/** The method (and, for a list that pages, its \`all\`) of one operation. */
function methodSource(
  path: string,
  method: string,
  operation: Operation,
  name: string,
  queryType: string | undefined,
  components: Record<string, Schema>,
): string[] {
  const pathParameters = (operation.parameters ?? []).filter((parameter) => parameter.in === 'path')
  const argument = (parameter: Parameter) =>
    camel(typeOf(parameter.schema ?? {}).replace(/^string$/, parameter.name ?? 'id'))
  const url = pathParameters.length
    ? `\`${path.replace(/\{(\w+)\}/g, (_, parameterName: string) => {
        const parameter = pathParameters.find((each) => each.name === parameterName)
        return `\${id(${argument(parameter ?? { name: parameterName })})}`
      })}\``
    : `'${path}'`
  const args = pathParameters.map((parameter) => `${argument(parameter)}: string`)
  const answer = answerOf(operation)
  const idempotent = (operation.parameters ?? []).some((parameter) => parameter.$ref === IDEMPOTENCY_KEY)
  const bodySchema = operation.requestBody?.content['application/json']?.schema
  const bodyType = bodySchema && typeOf(bodySchema)
  const takesBody = bodySchema !== undefined && !isEmptyObject(bodySchema, components)
  if (takesBody) args.push(operation.requestBody?.required ? `body: ${bodyType}` : `body: ${bodyType} = {}`)
  if (queryType) args.push(`query?: ${queryType}`)
  args.push(`options?: ${idempotent ? 'IdempotentCallOptions' : 'CallOptions'}`)
  const sentBody = takesBody ? 'body' : 'undefined'
  const call = idempotent
    ? `calls.post<${answer}>(${url}, ${sentBody}, options)`
    : method === 'GET'
      ? `calls.get<${answer}>(${url}, ${queryType ? 'query' : 'undefined'}, options)`
      : `calls.send<${answer}>('${method}', ${url}, ${sentBody}, options)`
  const lines = [
    `      ${docComment(`${operation.summary}.`, '      ')}`,
    `      ${name}: (${args.join(', ')}) =>`,
    `        ${call},`,
  ]
  const item = itemOf(answer, components)
  if (name === 'list' && queryType && item && hasQueryParameter(operation, 'starting_after')) {
    const allArgs = [...args.slice(0, -2), `query?: Omit<${queryType}, 'ending_before'>`, 'options?: CallOptions']
    lines.push(
      `      ${docComment(EVERY_ITEM, '      ')}`,
      `      all: (${allArgs.join(', ')}) =>`,
      `        calls.each<${item}>(${url}, query, options),`,
    )
  }
  return lines
}

/** The query parameters as one object type, or undefined when there are none. */
function queryOf(operation: Operation): Schema | undefined {
  const parameters = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query')
  if (!parameters.length) return undefined
  return {
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(
      parameters.map((parameter) => [
        parameter.name ?? '',
        { ...parameter.schema, ...(parameter.description && { description: parameter.description }) },
      ]),
    ),
    required: parameters.filter((parameter) => parameter.required).map((parameter) => parameter.name ?? ''),
  }
}

/** The successful answer's type. */
function answerOf(operation: Operation): string {
  const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))
  const schema = success?.[1].content?.['application/json']?.schema
  return schema ? typeOf(schema) : 'unknown'
}

/** The item type of a list answer ({object: 'list', data: Item[]}), or undefined for another answer. */
function itemOf(answer: string, components: Record<string, Schema>): string | undefined {
  const data = components[answer]?.properties?.data
  return data?.items ? typeOf(data.items) : undefined
}

function hasQueryParameter(operation: Operation, name: string): boolean {
  return (operation.parameters ?? []).some((parameter) => parameter.in === 'query' && parameter.name === name)
}

/** A body with nothing in it (the void's, the rotation's): the method takes none. */
function isEmptyObject(schema: Schema, components: Record<string, Schema>): boolean {
  const resolved = schema.$ref ? components[typeOf(schema)] : schema
  return resolved?.type === 'object' && Object.keys(resolved.properties ?? {}).length === 0
}

/** The components the operations name, and those they name in turn. */
function reachable(from: unknown[], components: Record<string, Schema>): Set<string> {
  const found = new Set<string>()
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const member of value) visit(member)
      return
    }
    if (value === null || typeof value !== 'object') return
    for (const [key, member] of Object.entries(value)) {
      if (key === '$ref' && typeof member === 'string' && member.startsWith('#/components/schemas/')) {
        const name = member.split('/').pop() as string
        if (!found.has(name)) {
          found.add(name)
          visit(components[name])
        }
      } else visit(member)
    }
  }
  // Problems are the client's ProblemError (src/client/errors.ts): answers that are not successes are left out.
  for (const operation of from) {
    const { responses, ...rest } = operation as Partial<Operation>
    visit(rest)
    for (const [status, response] of Object.entries(responses ?? {})) if (status.startsWith('2')) visit(response)
  }
  return found
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)
const camel = (text: string) => text.charAt(0).toLowerCase() + text.slice(1)
