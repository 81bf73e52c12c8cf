// POST /v1/charges/:id/refunds (idempotent): partial or full, never more than is left of what was captured;
// GET /v1/refunds, GET /v1/charges/:id/refunds, GET /v1/refunds/:id.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Sql } from '../db/connect.js'
import { type PaymentProcessor, rethrowAsProblem } from '../processor/processor.js'
import { Problem } from '../problems.js'
import { listBody } from './list-body.js'
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
          tag: 'Refunds',
          summary: 'Refund a charge, in part or in full',
          bodyExample: { amount_cents: 500 },
          responses: { 201: { description: 'The refund succeeded.', schema: Refund, headers: ['Location'] } },
          problems: ['charge-not-refundable', 'refund-exceeds-charge', 'processor-unavailable', 'processor-refused'],
        },
      },
    },
    async (request, reply) =>
      reply.idempotent(async (operation) => {
        const { refund, chargeReference } = await operation.reserve((tx) =>
          reserveRefund(tx, {
            accountId: request.account.id,
            chargeId: request.params.id,
            amountCents: request.body.amount_cents,
            operationId: operation.id,
          }),
        )
        const outcome = await operation
          .callOut((idempotencyKey) => processor.refund(refundCall(refund, chargeReference, idempotencyKey)))
          .catch(rethrowAsProblem)
        return operation.complete((tx) => recordRefund(tx, refund, outcome.processorReference))
      }),
  )

  const listed = (operationId: string, summary: string) => ({
    operationId,
    tag: 'Refunds' as const,
    summary,
    responses: { 200: { description: 'One page of refunds.', schema: RefundList } },
  })

  app.get(
    '/refunds',
    {
      schema: { querystring: ListRefundsQuery },
      config: { openapi: listed('listRefunds', 'List refunds, newest first') },
    },
    async (request) => {
      return listBody(
        await listRefunds(sql, request.account.id, undefined, pageRequest(request.query)),
        'refund of this account',
      )
    },
  )

  app.get(
    '/charges/:id/refunds',
    {
      schema: { params: ChargeParams, querystring: ListRefundsQuery },
      config: { openapi: listed('listChargeRefunds', 'List a charge’s refunds') },
    },
    async (request) => {
      if (!(await findCharge(sql, request.account.id, request.params.id)))
        throw new Problem('resource-not-found', `No charge ${request.params.id}.`)
      return listBody(
        await listRefunds(sql, request.account.id, request.params.id, pageRequest(request.query)),
        'refund of this charge',
      )
    },
  )

  const retrieve = {
    operationId: 'getRefund',
    tag: 'Refunds' as const,
    summary: 'Retrieve a refund',
    responses: { 200: { description: 'The refund.', schema: Refund } },
  }
  app.get('/refunds/:id', { schema: { params: RefundParams }, config: { openapi: retrieve } }, async (request) => {
    const refund = await findRefund(sql, request.account.id, request.params.id)
    if (!refund) throw new Problem('resource-not-found', `No refund ${request.params.id}.`)
    return refund
  })
}
