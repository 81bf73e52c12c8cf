// POST /v1/charges (idempotent; capture: false authorizes only), POST /v1/charges/:id/capture and /void
// (idempotent), GET /v1/charges/:id and GET /v1/charges; each with its entry of openapi.yaml.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { captureCall, chargeCall, chargeIdOf, voidCall } from '../charges/calls.js'
import { authorizationExpiry, recordCharge } from '../charges/record-charge.js'
import { findCharge, findChargeByIdempotencyKey, listCharges } from '../charges/repository.js'
import { chargeRecovery, settlementRecovery } from '../charges/recovery.js'
import { recordCapture, recordVoid, reserveSettlement } from '../charges/settle.js'
import type { Sql } from '../db/connect.js'
import type { ChargeSettings } from '../processor/pricing.js'
import { type PaymentProcessor, rethrowAsProblem } from '../processor/processor.js'
import { absentBodyIsEmpty } from './optional-body.js'
import { listRoute, retrieveRoute } from './read-routes.js'
import {
  CaptureChargeBody,
  Charge,
  ChargeList,
  ChargeParams,
  CreateChargeBody,
  ListChargesQuery,
  VoidChargeBody,
} from '../schemas/charge.js'
import { pageRequest } from '../schemas/page.js'

const SETTLEMENT_PROBLEMS = [
  'charge-operation-in-progress',
  'charge-not-capturable',
  'processor-unavailable',
  'processor-refused',
] as const

export default async function chargeRoutes(
  base: FastifyInstance,
  options: { sql: Sql; processor: PaymentProcessor; settings: ChargeSettings },
) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const { sql, processor } = options
  const { pricing } = options.settings

  // Phases (src/plugins/idempotency.ts): claim; call out; record and complete. An unknown outcome of the call is
  // settled by chargeRecovery (src/charges/recovery.ts), as the recovery worker runs it.
  app.post(
    '/charges',
    {
      schema: { body: CreateChargeBody },
      config: {
        idempotency: { required: true, recovery: chargeRecovery(processor, options.settings) },
        openapi: {
          operationId: 'createCharge',
          client: 'charges.create',
          tag: 'Charges',
          summary: 'Create a charge',
          bodyExample: {
            amount_cents: 2500,
            currency: 'usd',
            source: 'pm_card_visa',
            description: 'Invoice 1042',
            metadata: { invoice_id: '1042' },
          },
          responses: {
            201: {
              description:
                'The charge succeeded (or, with `capture: false`, is authorized), or it awaits the customer’s ' +
                'authentication (`requires_action`) or a bank debit’s settlement (`processing`).',
              schema: Charge,
              headers: ['Location'],
            },
          },
          problems: ['card-declined', 'processor-unavailable', 'processor-refused'],
        },
      },
    },
    async (request, reply) =>
      reply.idempotent(async (operation) => {
        const input = request.body
        const expiresAt = authorizationExpiry(input, options.settings.authorizationExpiresDays)
        // Outside any transaction: a slow processor must not hold a database connection or locks. If the answer
        // is lost, the key stays bound to this operation id: a retry, or the recovery worker, settles it.
        const outcome = await operation
          .callOut((idempotencyKey) => {
            const call = chargeCall(request.account, input, idempotencyKey)
            return expiresAt ? processor.authorize(call) : processor.charge(call)
          })
          .catch(rethrowAsProblem)
        // The charge, its event and the key's completion commit together.
        return operation.complete((tx) =>
          recordCharge(tx, chargeIdOf(operation.id), request.account, input, outcome, pricing, expiresAt),
        )
      }),
  )

  // Phases (src/charges/settle.ts): claim; reserve (fenced by the claim); call out; record and complete. If the
  // request fails before the call, the plugin gives the reservation back with the key (settlementRecovery's release).
  app.post(
    '/charges/:id/capture',
    {
      schema: { params: ChargeParams, body: CaptureChargeBody },
      config: {
        idempotency: { required: true, recovery: settlementRecovery(processor, sql, 'capture', pricing) },
        openapi: {
          operationId: 'captureCharge',
          client: 'charges.capture',
          tag: 'Charges',
          summary: 'Capture an authorized charge, in full or in part',
          bodyOptional: true,
          bodyExample: { amount_cents: 2000 },
          responses: {
            200: { description: 'The charge after the capture.', schema: Charge },
            202: {
              description:
                'The processor received the capture and decides it later: the charge is `capture_pending` until ' +
                '`charge.captured` or `charge.capture_failed` tells the outcome.',
              schema: Charge,
            },
          },
          problems: [...SETTLEMENT_PROBLEMS, 'capture-exceeds-authorization'],
        },
      },
      // No body means {}: "capture all of it" needs nothing more.
      preValidation: absentBodyIsEmpty,
    },
    async (request, reply) =>
      reply.idempotent(async (operation) => {
        const { charge, amountCents } = await operation.reserve((tx) =>
          reserveSettlement(tx, {
            accountId: request.account.id,
            chargeId: request.params.id,
            kind: 'capture',
            amountCents: request.body.amount_cents,
            operationId: operation.id,
          }),
        )
        const outcome = await operation
          .callOut((idempotencyKey) =>
            processor.capture(captureCall(charge, amountCents, idempotencyKey, request.account.platformPricing)),
          )
          .catch(rethrowAsProblem)
        return operation.complete((tx) => recordCapture(tx, pricing, charge, amountCents, outcome))
      }),
  )

  app.post(
    '/charges/:id/void',
    {
      schema: { params: ChargeParams, body: VoidChargeBody },
      config: {
        idempotency: { required: true, recovery: settlementRecovery(processor, sql, 'void', pricing) },
        openapi: {
          operationId: 'voidCharge',
          client: 'charges.void',
          tag: 'Charges',
          summary: 'Void an authorization',
          bodyOptional: true,
          responses: {
            200: { description: 'The charge after the void.', schema: Charge },
            202: {
              description:
                'The processor received the void and decides it later: the charge is `void_pending` until ' +
                '`charge.voided` or `charge.void_failed` tells the outcome.',
              schema: Charge,
            },
          },
          problems: SETTLEMENT_PROBLEMS,
        },
      },
      preValidation: absentBodyIsEmpty,
    },
    async (request, reply) =>
      reply.idempotent(async (operation) => {
        const { charge } = await operation.reserve((tx) =>
          reserveSettlement(tx, {
            accountId: request.account.id,
            chargeId: request.params.id,
            kind: 'void',
            operationId: operation.id,
          }),
        )
        const outcome = await operation
          .callOut((idempotencyKey) => processor.void(voidCall(charge, idempotencyKey)))
          .catch(rethrowAsProblem)
        return operation.complete((tx) => recordVoid(tx, charge, 'voided', outcome))
      }),
  )

  const names = { one: 'charge', many: 'charges', client: 'charges' }
  retrieveRoute(app, names, {
    url: '/charges/:id',
    params: ChargeParams,
    schema: Charge,
    operationId: 'getCharge',
    tag: 'Charges',
    find: (accountId, params) => findCharge(sql, accountId, params.id),
  })
  listRoute(app, names, {
    url: '/charges',
    query: ListChargesQuery,
    schema: ChargeList,
    operationId: 'listCharges',
    tag: 'Charges',
    async list(accountId, query) {
      if (query.idempotency_key === undefined) return listCharges(sql, accountId, pageRequest(query))
      const charge = await findChargeByIdempotencyKey(sql, accountId, query.idempotency_key)
      return { rows: charge ? [charge] : [], hasMore: false }
    },
  })
}
