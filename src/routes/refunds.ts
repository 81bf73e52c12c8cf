// POST /v1/charges/:id/refunds (idempotent): partial or full, never more than is left of what was captured;
// GET /v1/refunds, GET /v1/charges/:id/refunds, GET /v1/refunds/:id.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Sql } from '../db/connect.js'
import { type PaymentProcessor, rethrowAsProblem } from '../processor/processor.js'
import { Problem } from '../problems.js'
import { listRoute, retrieveRoute } from './read-routes.js'
import { recordRefund, refundCall, reserveRefund } from '../refunds/refunds.js'
import { refundRecovery } from '../refunds/recovery.js'
import { findRefund, listRefunds } from '../refunds/repository.js'
import { findCharge } from '../charges/repository.js'
import { ChargeParams } from '../schemas/charge.js'
import { pageRequest } from '../schemas/page.js'
import { CreateRefundBody, ListRefundsQuery, Refund, RefundList, RefundParams } from '../schemas/refund.js'

export default async function refundRoutes(base: FastifyInstance, options: { sql: Sql; processor: PaymentProcessor }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const { sql, processor } = options

  // Phases (src/refunds/refunds.ts): claim; reserve (fenced by the claim); call out; record and complete. If the
  // request fails before the call, reply.idempotent gives the reservation back with the key (refundRecovery's release).
  app.post(
    '/charges/:id/refunds',
    {
      schema: { params: ChargeParams, body: CreateRefundBody },
      config: {
        idempotency: { required: true, recovery: refundRecovery(processor, sql) },
        openapi: {
          operationId: 'createRefund',
          client: 'refunds.create',
          tag: 'Refunds',
          summary: 'Refund a charge, in part or in full',
          bodyExample: { amount_cents: 500 },
          responses: {
            201: { description: 'The refund succeeded.', schema: Refund, headers: ['Location'] },
            202: {
              description:
                'The processor received the refund and decides it later: it is `pending` until `charge.refunded` ' +
                'or `charge.refund.failed` tells the outcome.',
              schema: Refund,
              headers: ['Location'],
            },
          },
          problems: ['charge-not-refundable', 'refund-exceeds-charge', 'processor-unavailable', 'processor-refused'],
        },
      },
    },
    async (request, reply) =>
      reply.idempotent(async (operation) => {
        const { refund, payment } = await operation.reserve((tx) =>
          reserveRefund(tx, {
            accountId: request.account.id,
            chargeId: request.params.id,
            amountCents: request.body.amount_cents,
            refundApplicationFee: request.body.refund_application_fee ?? false,
            operationId: operation.id,
          }),
        )
        const outcome = await operation
          .callOut((idempotencyKey) => processor.refund(refundCall(refund, payment, idempotencyKey)))
          .catch(rethrowAsProblem)
        return operation.complete((tx) => recordRefund(tx, refund, outcome))
      }),
  )

  const names = { one: 'refund', many: 'refunds', client: 'refunds' }
  listRoute(app, names, {
    url: '/refunds',
    query: ListRefundsQuery,
    schema: RefundList,
    operationId: 'listRefunds',
    tag: 'Refunds',
    list: (accountId, query) => listRefunds(sql, accountId, undefined, pageRequest(query)),
  })
  listRoute(app, names, {
    url: '/charges/:id/refunds',
    params: ChargeParams,
    query: ListRefundsQuery,
    schema: RefundList,
    operationId: 'listChargeRefunds',
    client: 'charges.listRefunds',
    tag: 'Refunds',
    summary: 'List a charge’s refunds',
    item: 'refund of this charge',
    async list(accountId, query, params) {
      if (!(await findCharge(sql, accountId, params.id)))
        throw new Problem('resource-not-found', `No charge ${params.id}.`)
      return listRefunds(sql, accountId, params.id, pageRequest(query))
    },
  })
  retrieveRoute(app, names, {
    url: '/refunds/:id',
    params: RefundParams,
    schema: Refund,
    operationId: 'getRefund',
    tag: 'Refunds',
    find: (accountId, params) => findRefund(sql, accountId, params.id),
  })
}
