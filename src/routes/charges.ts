// POST /v1/charges (idempotent), GET /v1/charges/:id and GET /v1/charges.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { findCharge, insertCharge, listCharges } from '../charges/repository.js'
import { type PaymentProcessor, rethrowUnavailable } from '../charges/processor.js'
import type { Sql } from '../db/connect.js'
import { downstreamIdempotencyKey } from '../plugins/idempotency.js'
import { PROBLEM_CONTENT_TYPE, Problem, problemBody } from '../problems.js'
import { ChargeParams, CreateChargeBody, DEFAULT_PAGE_SIZE, ListChargesQuery } from '../schemas/charge.js'

export default async function chargeRoutes(base: FastifyInstance, options: { sql: Sql; processor: PaymentProcessor }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const { sql, processor } = options

  app.post('/charges', { schema: { body: CreateChargeBody }, config: { idempotency: { required: true } } }, async (request, reply) => {
    const input = request.body
    // Outside the transaction: a slow processor must not hold a database connection and row locks.
    // A crash after this call is safe: the retry reuses the operation id, and the processor replays its outcome.
    const outcome = await processor
      .charge({
        amountCents: input.amount_cents,
        currency: input.currency,
        source: input.source,
        idempotencyKey: downstreamIdempotencyKey(request),
      })
      .catch(rethrowUnavailable)
    return reply.transact(async (tx) => {
      const charge = await insertCharge(tx, request.account.id, input, outcome)
      if (charge.status === 'failed') {
        return {
          status: 402,
          contentType: PROBLEM_CONTENT_TYPE,
          body: problemBody('card-declined', charge.failure_message ?? 'The card was declined.', {
            decline_code: charge.failure_code,
            charge: charge.id,
          }),
        }
      }
      return { status: 201, location: `/v1/charges/${charge.id}`, body: charge }
    })
  })

  app.get('/charges/:id', { schema: { params: ChargeParams } }, async (request) => {
    const charge = await findCharge(sql, request.account.id, request.params.id)
    if (!charge) throw new Problem('resource-not-found', `No charge ${request.params.id}.`)
    return charge
  })

  app.get('/charges', { schema: { querystring: ListChargesQuery } }, async (request) => {
    const { limit = DEFAULT_PAGE_SIZE, starting_after: startingAfter } = request.query
    const page = await listCharges(sql, request.account.id, { limit, startingAfter })
    if (!page) throw new Problem('validation-failed', `starting_after: no charge ${startingAfter}.`)
    return { object: 'list', data: page.charges, has_more: page.hasMore }
  })
}
