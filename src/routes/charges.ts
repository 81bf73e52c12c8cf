// POST /v1/charges (idempotent), GET /v1/charges/:id and GET /v1/charges.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { recordCharge } from '../charges/record-charge.js'
import { findCharge, listCharges } from '../charges/repository.js'
import type { Sql } from '../db/connect.js'
import { downstreamIdempotencyKey } from '../plugins/idempotency.js'
import { type PaymentProcessor, rethrowUnavailable } from '../processor/processor.js'
import { Problem } from '../problems.js'
import { ChargeParams, CreateChargeBody, DEFAULT_PAGE_SIZE, ListChargesQuery } from '../schemas/charge.js'

export default async function chargeRoutes(base: FastifyInstance, options: { sql: Sql; processor: PaymentProcessor }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const { sql, processor } = options

  // Phases: claim (the idempotency plugin, before this runs); call out; record and complete.
  app.post('/charges', { schema: { body: CreateChargeBody }, config: { idempotency: { required: true } } }, async (request, reply) => {
    const input = request.body
    // Outside any transaction: a slow processor must not hold a database connection or locks. If the answer is
    // lost, the key stays bound to this operation id: a retry, or the recovery worker, settles it.
    const outcome = await processor
      .charge({ amountCents: input.amount_cents, currency: input.currency, source: input.source, idempotencyKey: downstreamIdempotencyKey(request) })
      .catch(rethrowUnavailable)
    // One statement: the charge and the key's completion commit together, in one round trip.
    return reply.commit(recordCharge(sql, request.account.id, input, outcome))
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
