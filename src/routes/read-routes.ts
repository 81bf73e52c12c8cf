// The two read routes every resource has, GET /v1/<things>/:id and GET /v1/<things>, from what makes each
// resource's own: its schemas and its repository's find and list. The route's schema, its entry of openapi.yaml,
// the 404 for an id the account does not have, and the list's body (./list-body.ts) are written once, here.
import type { FastifyInstance } from 'fastify'
import type { Static, TSchema } from '@fastify/type-provider-typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Page } from '../db/pagination.js'
import type { OperationDoc } from '../openapi/operation.js'
import { Problem } from '../problems.js'
import { listBody } from './list-body.js'

/**
 * How the API names one resource and many ("charge", "charges"; "webhook endpoint", "endpoints"), and the client's
 * resource that reads them ("charges", "webhookEndpoints"): its methods are `retrieve` and `list`.
 */
export interface ResourceNames {
  one: string
  many: string
  client: string
}

type Documented = Pick<OperationDoc, 'operationId' | 'tag'> &
  Partial<Pick<OperationDoc, 'summary' | 'description' | 'client'>>

/** GET `url` (with :id): the account's resource, or 404 `No <one> <id>.` */
export function retrieveRoute<Params extends TSchema, Item extends TSchema>(
  base: FastifyInstance,
  names: ResourceNames,
  route: Documented & {
    url: string
    params: Params
    schema: Item
    /** Says what the 200 holds, when more than "The <one>." */
    answer?: string
    find(accountId: string, params: Static<Params>): Promise<Static<Item> | undefined>
  },
): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const openapi: OperationDoc = {
    operationId: route.operationId,
    tag: route.tag,
    summary: route.summary ?? `Retrieve a ${names.one}`,
    client: route.client ?? `${names.client}.retrieve`,
    ...(route.description !== undefined && { description: route.description }),
    responses: { 200: { description: route.answer ?? `The ${names.one}.`, schema: route.schema } },
  }
  app.get(route.url, { schema: { params: route.params }, config: { openapi } }, async (request) => {
    const found = await route.find(request.account.id, request.params as Static<Params>)
    if (!found) throw new Problem('resource-not-found', `No ${names.one} ${(request.params as { id: string }).id}.`)
    return found
  })
}

/** GET `url`: one page of the account's resources, newest first; 400 for a cursor that names none of them. */
export function listRoute<Query extends TSchema, Params extends TSchema, Item>(
  base: FastifyInstance,
  names: ResourceNames,
  route: Documented & {
    url: string
    query: Query
    /** For a list under another resource (a charge's refunds). */
    params?: Params
    schema: TSchema
    /** What a cursor must name: "charge of this account" by default. */
    item?: string
    list(accountId: string, query: Static<Query>, params: Static<Params>): Promise<Page<Item> | undefined>
  },
): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const openapi: OperationDoc = {
    operationId: route.operationId,
    tag: route.tag,
    summary: route.summary ?? `List ${names.many}, newest first`,
    client: route.client ?? `${names.client}.list`,
    ...(route.description !== undefined && { description: route.description }),
    responses: { 200: { description: `One page of ${names.many}.`, schema: route.schema } },
  }
  const schema = { querystring: route.query, ...(route.params && { params: route.params }) }
  app.get(route.url, { schema, config: { openapi } }, async (request) => {
    const page = await route.list(request.account.id, request.query as Static<Query>, request.params as Static<Params>)
    return listBody(page, route.item ?? `${names.one} of this account`)
  })
}
