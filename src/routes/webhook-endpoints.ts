// Webhook endpoints: create (idempotent; the signing secret is shown once), list, retrieve, update, delete,
// rotate the secret (idempotent), and list an endpoint's deliveries with their attempts.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Sql } from '../db/connect.js'
import { Problem } from '../problems.js'
import { listRoute, retrieveRoute } from './read-routes.js'
import { absentBodyIsEmpty, EmptyBody } from './optional-body.js'
import { DEFAULT_PAGE_SIZE, pageRequest } from '../schemas/page.js'
import {
  CreateWebhookEndpointBody,
  ListDeliveriesQuery,
  ListWebhookEndpointsQuery,
  DeletedWebhookEndpoint,
  UpdateWebhookEndpointBody,
  WebhookDeliveryList,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointParams,
} from '../schemas/webhook.js'
import { listDeliveries } from '../webhooks/deliveries.js'
import {
  createEndpoint,
  deleteEndpoint,
  findEndpoint,
  listEndpoints,
  rotateSecret,
  updateEndpoint,
} from '../webhooks/endpoints.js'
import { webhookUrlProblem } from '../webhooks/urls.js'

export default async function webhookEndpointRoutes(
  base: FastifyInstance,
  options: { sql: Sql; allowPrivateUrls: boolean },
) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const { sql } = options
  const notFound = (id: string) => new Problem('resource-not-found', `No webhook endpoint ${id}.`)
  async function checkUrl(url: string) {
    const problem = await webhookUrlProblem(url, options.allowPrivateUrls)
    if (problem) throw new Problem('webhook-url-refused', `The url ${problem}.`)
  }

  const create = {
    operationId: 'createWebhookEndpoint',
    client: 'webhookEndpoints.create',
    tag: 'Webhook endpoints' as const,
    summary: 'Create a webhook endpoint',
    bodyExample: { url: 'https://example.com/hooks/payments', enabled_events: ['*'] },
    responses: {
      201: { description: 'The endpoint, with its secret.', schema: WebhookEndpoint, headers: ['Location' as const] },
    },
    problems: ['webhook-url-refused' as const],
  }
  app.post(
    '/webhook_endpoints',
    { schema: { body: CreateWebhookEndpointBody }, config: { idempotency: { required: true }, openapi: create } },
    async (request, reply) =>
      reply.idempotent(async (operation) => {
        // Refused (a 4xx) before anything is written: the key is let go, free for a corrected retry.
        await checkUrl(request.body.url)
        return operation.complete(async (tx) => {
          const endpoint = await createEndpoint(tx, request.account.id, request.body)
          return { status: 201, location: `/v1/webhook_endpoints/${endpoint.id}`, body: endpoint }
        })
      }),
  )

  const names = { one: 'webhook endpoint', many: 'endpoints', client: 'webhookEndpoints' }
  listRoute(app, names, {
    url: '/webhook_endpoints',
    query: ListWebhookEndpointsQuery,
    schema: WebhookEndpointList,
    operationId: 'listWebhookEndpoints',
    tag: 'Webhook endpoints',
    summary: 'List webhook endpoints, newest first',
    list: (accountId, query) => listEndpoints(sql, accountId, pageRequest(query)),
  })
  retrieveRoute(app, names, {
    url: '/webhook_endpoints/:id',
    params: WebhookEndpointParams,
    schema: WebhookEndpoint,
    operationId: 'getWebhookEndpoint',
    tag: 'Webhook endpoints',
    answer: 'The endpoint (without its secret).',
    find: (accountId, params) => findEndpoint(sql, accountId, params.id),
  })

  const update = {
    operationId: 'updateWebhookEndpoint',
    client: 'webhookEndpoints.update',
    tag: 'Webhook endpoints' as const,
    summary: 'Update a webhook endpoint',
    bodyExample: { enabled_events: ['charge.succeeded', 'charge.refunded'], description: 'orders' },
    responses: { 200: { description: 'The endpoint.', schema: WebhookEndpoint } },
    problems: ['webhook-url-refused' as const],
  }
  app.patch(
    '/webhook_endpoints/:id',
    { schema: { params: WebhookEndpointParams, body: UpdateWebhookEndpointBody }, config: { openapi: update } },
    async (request) => {
      if (request.body.url !== undefined) await checkUrl(request.body.url)
      const endpoint = await updateEndpoint(sql, request.account.id, request.params.id, request.body)
      if (!endpoint) throw notFound(request.params.id)
      return endpoint
    },
  )

  const remove = {
    operationId: 'deleteWebhookEndpoint',
    client: 'webhookEndpoints.delete',
    tag: 'Webhook endpoints' as const,
    summary: 'Delete a webhook endpoint',
    responses: { 200: { description: 'Deleted.', schema: DeletedWebhookEndpoint } },
  }
  app.delete(
    '/webhook_endpoints/:id',
    { schema: { params: WebhookEndpointParams }, config: { openapi: remove } },
    async (request) => {
      if (!(await deleteEndpoint(sql, request.account.id, request.params.id))) throw notFound(request.params.id)
      return { id: request.params.id, object: 'webhook_endpoint', deleted: true }
    },
  )

  app.post(
    '/webhook_endpoints/:id/rotate_secret',
    {
      schema: { params: WebhookEndpointParams, body: EmptyBody },
      config: {
        idempotency: { required: true },
        openapi: {
          operationId: 'rotateWebhookSecret',
          client: 'webhookEndpoints.rotateSecret',
          tag: 'Webhook endpoints',
          summary: 'Rotate the signing secret',
          bodyOptional: true,
          responses: { 200: { description: 'The endpoint, with its new secret.', schema: WebhookEndpoint } },
        },
      },
      preValidation: absentBodyIsEmpty,
    },
    async (request, reply) =>
      reply.idempotent((operation) =>
        operation.complete(async (tx) => {
          const endpoint = await rotateSecret(tx, request.account.id, request.params.id)
          if (!endpoint) throw notFound(request.params.id)
          return { status: 200, body: endpoint }
        }),
      ),
  )

  const deliveries = {
    operationId: 'listWebhookDeliveries',
    client: 'webhookEndpoints.deliveries',
    tag: 'Webhook endpoints' as const,
    summary: 'List the deliveries of an endpoint, with every attempt',
    responses: { 200: { description: 'The latest deliveries, newest first.', schema: WebhookDeliveryList } },
  }
  app.get(
    '/webhook_endpoints/:id/deliveries',
    { schema: { params: WebhookEndpointParams, querystring: ListDeliveriesQuery }, config: { openapi: deliveries } },
    async (request) => {
      if (!(await findEndpoint(sql, request.account.id, request.params.id))) throw notFound(request.params.id)
      const limit = request.query.limit ?? DEFAULT_PAGE_SIZE
      const data = await listDeliveries(sql, {
        accountId: request.account.id,
        endpointId: request.params.id,
        limit: limit + 1,
      })
      return { object: 'list', data: data.slice(0, limit), has_more: data.length > limit }
    },
  )
}
