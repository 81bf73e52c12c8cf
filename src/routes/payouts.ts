// GET /v1/payouts and GET /v1/payouts/:id: the processor's payouts, each as this account's share of it
// (src/payouts/repository.ts; written where a payout is applied to the books, src/processor-events/payouts.ts); each
// with its entry of openapi.yaml.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Sql } from '../db/connect.js'
import { findPayout, listPayouts } from '../payouts/repository.js'
import { Problem } from '../problems.js'
import { ListPayoutsQuery, Payout, PayoutList, PayoutParams } from '../schemas/payout.js'
import { pageRequest } from '../schemas/page.js'
import { listBody } from './list-body.js'

export default async function payoutRoutes(base: FastifyInstance, options: { sql: Sql }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const { sql } = options

  app.get(
    '/payouts/:id',
    {
      schema: { params: PayoutParams },
      config: {
        openapi: {
          operationId: 'getPayout',
          tag: 'Payouts',
          summary: 'Retrieve a payout',
          responses: { 200: { description: 'The payout.', schema: Payout } },
        },
      },
    },
    async (request) => {
      const found = await findPayout(sql, request.account.id, request.params.id)
      if (!found) throw new Problem('resource-not-found', `No payout ${request.params.id}.`)
      return found
    },
  )

  app.get(
    '/payouts',
    {
      schema: { querystring: ListPayoutsQuery },
      config: {
        openapi: {
          operationId: 'listPayouts',
          tag: 'Payouts',
          summary: 'List payouts, newest first',
          responses: { 200: { description: 'One page of payouts.', schema: PayoutList } },
        },
      },
    },
    async (request) => {
      const page = await listPayouts(sql, request.account.id, request.query.status, pageRequest(request.query))
      return listBody(page, 'payout of this account')
    },
  )
}
