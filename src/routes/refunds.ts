// POST /v1/charges/:id/refunds (idempotent): partial or full, never more than is left of the charge; GET /v1/refunds/:id.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Sql } from '../db/connect.js'
import { downstreamIdempotencyKey, operationIdOf } from '../plugins/idempotency.js'
import { type PaymentProcessor, rethrowUnavailable } from '../processor/processor.js'
import { Problem } from '../problems.js'
import { recordRefund, reserveRefund } from '../refunds/refunds.js'
import { deletePendingRefund, findRefund } from '../refunds/repository.js'
import { ChargeParams } from '../schemas/charge.js'
import { CreateRefundBody, RefundParams } from '../schemas/refund.js'

export default async function refundRoutes(base: FastifyInstance, options: { sql: Sql; processor: PaymentProcessor }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const { sql, processor } = options

  // Phases (src/refunds/refunds.ts): claim (the plugin); reserve; call out; record and complete.
  app.post(
    '/charges/:id/refunds',
    { schema: { params: ChargeParams, body: CreateRefundBody }, config: { idempotency: { required: true } } },
    async (request, reply) => {
      const operationId = operationIdOf(request)
      const { refund, chargeReference } = await reserveRefund(sql, {
        accountId: request.account.id,
        chargeId: request.params.id,
        amountCents: request.body.amount_cents,
        operationId,
      })
      const outcome = await Promise.resolve()
        .then(() => processor.refund({ chargeReference, amountCents: refund.amount_cents, idempotencyKey: downstreamIdempotencyKey(request) }))
        .catch(async (error: unknown) => {
          // Nothing went out (the deadline passed first): the reservation goes back at once.
          if (!request.operationSentDownstream) await sql.begin((tx) => deletePendingRefund(tx, operationId))
          return rethrowUnavailable(error)
        })
      return reply.transact((tx) => recordRefund(tx, refund, outcome.processorReference))
    },
  )

  app.get('/refunds/:id', { schema: { params: RefundParams } }, async (request) => {
    const refund = await findRefund(sql, request.account.id, request.params.id)
    if (!refund) throw new Problem('resource-not-found', `No refund ${request.params.id}.`)
    return refund
  })
}
