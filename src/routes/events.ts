// GET /v1/events, GET /v1/events/:id, and POST /v1/events/:id/redeliver (idempotent).
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Sql } from '../db/connect.js'
import { findEventBody, listEventBodies } from '../events/repository.js'
import { Problem } from '../problems.js'
import { foundPage } from './list-body.js'
import { absentBodyIsEmpty } from './optional-body.js'
import { pageRequest } from '../schemas/page.js'
import {
  Event,
  EventList,
  EventParams,
  ListEventsQuery,
  RedeliverBody,
  WebhookDeliveryList,
} from '../schemas/webhook.js'
import { redeliver } from '../webhooks/deliveries.js'

const JSON_TYPE = 'application/json; charset=utf-8'

export default async function eventRoutes(base: FastifyInstance, options: { sql: Sql }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const { sql } = options

  // Events are stored as the bytes they were sent as; lists are spliced from them, not re-serialised.
  const list = {
    operationId: 'listEvents',
    client: 'events.list',
    tag: 'Events' as const,
    summary: 'List events, newest first',
    responses: { 200: { description: 'One page of events.', schema: EventList } },
  }
  app.get(
    '/events',
    { schema: { querystring: ListEventsQuery }, config: { openapi: list } },
    async (request, reply) => {
      const page = foundPage(
        await listEventBodies(sql, request.account.id, pageRequest(request.query), request.query.type),
        'event of this account',
      )
      return reply.type(JSON_TYPE).send(`{"object":"list","data":[${page.rows.join(',')}],"has_more":${page.hasMore}}`)
    },
  )

  const retrieve = {
    operationId: 'getEvent',
    client: 'events.retrieve',
    tag: 'Events' as const,
    summary: 'Retrieve an event',
    responses: { 200: { description: 'The event.', schema: Event } },
  }
  app.get('/events/:id', { schema: { params: EventParams }, config: { openapi: retrieve } }, async (request, reply) => {
    const body = await findEventBody(sql, request.account.id, request.params.id)
    if (!body) throw new Problem('resource-not-found', `No event ${request.params.id}.`)
    return reply.type(JSON_TYPE).send(body)
  })

  app.post(
    '/events/:id/redeliver',
    {
      schema: { params: EventParams, body: RedeliverBody },
      config: {
        idempotency: { required: true },
        openapi: {
          operationId: 'redeliverEvent',
          client: 'events.redeliver',
          tag: 'Events',
          summary: 'Send an event again',
          bodyOptional: true,
          responses: { 202: { description: 'The deliveries, pending again.', schema: WebhookDeliveryList } },
        },
      },
      preValidation: absentBodyIsEmpty,
    },
    async (request, reply) =>
      reply.idempotent((operation) =>
        operation.complete(async (tx) => {
          const deliveries = await redeliver(tx, request.account.id, request.params.id, request.body.endpoint_id)
          if (!deliveries) throw new Problem('resource-not-found', `No event ${request.params.id}.`)
          if (request.body.endpoint_id && deliveries.length === 0)
            throw new Problem('resource-not-found', `No enabled webhook endpoint ${request.body.endpoint_id}.`)
          if (deliveries.length === 0) {
            throw new Problem(
              'resource-not-found',
              `No enabled webhook endpoint takes event ${request.params.id}'s type: create one (POST ` +
                `/v1/webhook_endpoints) or enable one, then redeliver.`,
            )
          }
          return { status: 202, body: { object: 'list', data: deliveries, has_more: false } }
        }),
      ),
  )
}
