// POST /v1/charges/:id/refunds (idempotent): partial or full, never more than is left of the charge; GET /v1/refunds/:id.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { findRefund, insertRefund, lockChargeForRefund } from '../charges/repository.js'
import { type PaymentProcessor, rethrowUnavailable } from '../charges/processor.js'
import type { Sql } from '../db/connect.js'
import { downstreamIdempotencyKey } from '../plugins/idempotency.js'
import { Problem } from '../problems.js'
import { ChargeParams } from '../schemas/charge.js'
import { CreateRefundBody, RefundParams } from '../schemas/refund.js'

export default async function refundRoutes(base: FastifyInstance, options: { sql: Sql; processor: PaymentProcessor }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/charges/:id/refunds',
    { schema: { params: ChargeParams, body: CreateRefundBody }, config: { idempotency: { required: true } } },
    async (request, reply) =>
      reply.transact(async (tx) => {
        // The row lock serialises refunds of one charge, so concurrent ones can never add up past its amount;
        // the processor is called under it for the same reason.
        const charge = await lockChargeForRefund(tx, request.account.id, request.params.id)
        if (!charge) throw new Problem('resource-not-found', `No charge ${request.params.id}.`)
        if (charge.status !== 'succeeded') throw new Problem('charge-not-refundable', `Charge ${charge.id} did not succeed; there is nothing to refund.`)
        const remaining = charge.amount_cents - charge.amount_refunded_cents
        if (remaining === 0) throw new Problem('charge-not-refundable', `Charge ${charge.id} is already fully refunded.`)
        const amountCents = request.body.amount_cents ?? remaining
        if (amountCents > remaining) {
          throw new Problem('refund-exceeds-charge', `A refund of ${amountCents} exceeds the ${remaining} left of charge ${charge.id}.`, {
            extensions: { amount_refundable_cents: remaining },
          })
        }
        const { processorReference } = await options.processor
          .refund({ chargeReference: charge.processor_reference ?? charge.id, amountCents, idempotencyKey: downstreamIdempotencyKey(request) })
          .catch(rethrowUnavailable)
        const refund = await insertRefund(tx, charge, amountCents, processorReference)
        return { status: 201, location: `/v1/refunds/${refund.id}`, body: refund }
      }),
  )

  app.get('/refunds/:id', { schema: { params: RefundParams } }, async (request) => {
    const refund = await findRefund(options.sql, request.account.id, request.params.id)
    if (!refund) throw new Problem('resource-not-found', `No refund ${request.params.id}.`)
    return refund
  })
}
