// POST /v1/payouts (idempotent), GET /v1/payouts/:id and GET /v1/payouts, each with its entry of openapi.yaml.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Sql } from '../db/connect.js'
import { payoutCall, recordPayout, reservePayout } from '../payouts/payouts.js'
import { findPayout, listPayouts } from '../payouts/repository.js'
import { type PaymentProcessor, rethrowAsProblem } from '../processor/processor.js'
import { Problem } from '../problems.js'
import { pageRequest } from '../schemas/page.js'
import { CreatePayoutBody, ListPayoutsQuery, Payout, PayoutList, PayoutParams } from '../schemas/payout.js'
import { listBody } from './list-body.js'

/** `clock`: what time it is for the balance (the service's is the system's; tests move it). */
export default async function payoutRoutes(
  base: FastifyInstance,
  options: { sql: Sql; processor: PaymentProcessor; clock: () => Date },
) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const { sql, processor, clock } = options

  // Phases (src/payouts/payouts.ts): claim; reserve (fenced by the claim); call out; record and complete.
  const create = {
    operationId: 'createPayout',
    tag: 'Payouts' as const,
    summary: 'Pay out of the balance',
    bodyExample: { amount_cents: 5000, currency: 'usd' },
    responses: { 201: { description: 'The payout, paid or failed.', schema: Payout, headers: ['Location' as const] } },
    problems: ['payout-exceeds-balance' as const, 'processor-unavailable' as const, 'processor-refused' as const],
  }
  app.post(
    '/payouts',
    { schema: { body: CreatePayoutBody }, config: { idempotency: { required: true }, openapi: create } },
    async (request, reply) =>
      reply.idempotent(async (operation) => {
        const payout = await operation.reserve((tx) =>
          reservePayout(tx, request.account.id, request.body, operation.id, clock()),
        )
        const outcome = await operation
          .callOut((idempotencyKey) => processor.payout(payoutCall(payout, idempotencyKey)))
          .catch(rethrowAsProblem)
        return operation.complete((tx) => recordPayout(tx, payout, outcome))
      }),
  )

  const retrieve = {
    operationId: 'getPayout',
    tag: 'Payouts' as const,
    summary: 'Retrieve a payout',
    responses: { 200: { description: 'The payout.', schema: Payout } },
  }
  app.get('/payouts/:id', { schema: { params: PayoutParams }, config: { openapi: retrieve } }, async (request) => {
    const payout = await findPayout(sql, request.account.id, request.params.id)
    if (!payout) throw new Problem('resource-not-found', `No payout ${request.params.id}.`)
    return payout
  })

  const list = {
    operationId: 'listPayouts',
    tag: 'Payouts' as const,
    summary: 'List payouts, newest first',
    responses: { 200: { description: 'One page of payouts.', schema: PayoutList } },
  }
  app.get('/payouts', { schema: { querystring: ListPayoutsQuery }, config: { openapi: list } }, async (request) => {
    return listBody(await listPayouts(sql, request.account.id, pageRequest(request.query)), 'payout of this account')
  })
}
