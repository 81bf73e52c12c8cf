// GET /v1/payouts and GET /v1/payouts/:id: the processor's payouts, each as this account's share of it
// (src/payouts/repository.ts; written where a payout is applied to the books, src/processor-events/payouts.ts); each
// with its entry of openapi.yaml.
import type { FastifyInstance } from 'fastify'
import type { Sql } from '../db/connect.js'
import { findPayout, listPayouts } from '../payouts/repository.js'
import { ListPayoutsQuery, Payout, PayoutList, PayoutParams } from '../schemas/payout.js'
import { pageRequest } from '../schemas/page.js'
import { listRoute, retrieveRoute } from './read-routes.js'

export default async function payoutRoutes(app: FastifyInstance, options: { sql: Sql }) {
  const { sql } = options
  const names = { one: 'payout', many: 'payouts', client: 'payouts' }
  retrieveRoute(app, names, {
    url: '/payouts/:id',
    params: PayoutParams,
    schema: Payout,
    operationId: 'getPayout',
    tag: 'Payouts',
    find: (accountId, params) => findPayout(sql, accountId, params.id),
  })
  listRoute(app, names, {
    url: '/payouts',
    query: ListPayoutsQuery,
    schema: PayoutList,
    operationId: 'listPayouts',
    tag: 'Payouts',
    list: (accountId, query) => listPayouts(sql, accountId, query.status, pageRequest(query)),
  })
}
