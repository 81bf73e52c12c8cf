// POST /v1/charges (idempotent; capture: false authorizes only), POST /v1/charges/:id/capture and /void
// (idempotent), GET /v1/charges/:id and GET /v1/charges.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { captureCall, chargeCall, voidCall } from '../charges/calls.js'
import { authorizationExpiry, recordCharge } from '../charges/record-charge.js'
import { findCharge, findChargeByIdempotencyKey, listCharges } from '../charges/repository.js'
import { recordCapture, recordVoid, reserveSettlement, type Settlement } from '../charges/settle.js'
import type { Sql } from '../db/connect.js'
import { operationIdOf } from '../plugins/idempotency.js'
import { type PaymentProcessor, rethrowAsProblem } from '../processor/processor.js'
import { Problem } from '../problems.js'
import { listBody } from './list-body.js'
import { absentBodyIsEmpty } from './optional-body.js'
import { CaptureChargeBody, ChargeParams, CreateChargeBody, ListChargesQuery } from '../schemas/charge.js'
import { pageRequest } from '../schemas/page.js'

export default async function chargeRoutes(base: FastifyInstance, options: { sql: Sql; processor: PaymentProcessor; authorizationExpiresDays: number }) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const { sql, processor } = options

  // Phases: claim (the idempotency plugin, before this runs); call out; record and complete.
  app.post('/charges', { schema: { body: CreateChargeBody }, config: { idempotency: { required: true } } }, async (request, reply) => {
    const input = request.body
    const expiresAt = authorizationExpiry(input, options.authorizationExpiresDays)
    // Outside any transaction: a slow processor must not hold a database connection or locks. If the answer is
    // lost, the key stays bound to this operation id: a retry, or the recovery worker, settles it.
    const outcome = await reply
      .callOut((idempotencyKey) => {
        const call = chargeCall(request.account.id, input, idempotencyKey)
        return expiresAt ? processor.authorize(call) : processor.charge(call)
      })
      .catch(rethrowAsProblem)
    // One statement: the charge, its event and the key's completion commit together, in one round trip.
    return reply.commit(recordCharge(request.account.id, input, outcome, expiresAt))
  })

  // Phases (src/charges/settle.ts): claim; reserve (fenced by the claim); call out; record and complete. If the
  // request fails before the call, the plugin gives the reservation back with the key (settlementRecovery's release).
  for (const kind of ['capture', 'void'] as const satisfies Settlement[]) {
    app.post(
      `/charges/:id/${kind}`,
      {
        schema: { params: ChargeParams, body: CaptureChargeBody },
        config: { idempotency: { required: true } },
        // No body means {}: "capture all of it" and "void" need nothing more.
        preValidation: absentBodyIsEmpty,
      },
      async (request, reply) => {
        if (kind === 'void' && request.body.amount_cents !== undefined) throw new Problem('validation-failed', 'A void releases the whole authorization; it takes no amount_cents.')
        const { charge, amountCents } = await reply.reserve((tx) =>
          reserveSettlement(tx, { accountId: request.account.id, chargeId: request.params.id, kind, amountCents: request.body.amount_cents, operationId: operationIdOf(request) }),
        )
        await reply
          .callOut((idempotencyKey) =>
            kind === 'capture' ? processor.capture(captureCall(charge, amountCents, idempotencyKey)) : processor.void(voidCall(charge, idempotencyKey)),
          )
          .catch(rethrowAsProblem)
        return reply.transact((tx) => (kind === 'capture' ? recordCapture(tx, charge, amountCents) : recordVoid(tx, charge, 'voided')))
      },
    )
  }

  app.get('/charges/:id', { schema: { params: ChargeParams } }, async (request) => {
    const charge = await findCharge(sql, request.account.id, request.params.id)
    if (!charge) throw new Problem('resource-not-found', `No charge ${request.params.id}.`)
    return charge
  })

  app.get('/charges', { schema: { querystring: ListChargesQuery } }, async (request) => {
    if (request.query.idempotency_key !== undefined) {
      const charge = await findChargeByIdempotencyKey(sql, request.account.id, request.query.idempotency_key)
      return { object: 'list', data: charge ? [charge] : [], has_more: false }
    }
    return listBody(await listCharges(sql, request.account.id, pageRequest(request.query)), 'charge of this account')
  })
}
