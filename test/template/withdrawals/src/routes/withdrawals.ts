// POST /v1/withdrawals (idempotent), GET /v1/withdrawals/:id and GET /v1/withdrawals, each with its entry of
// openapi.yaml.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Sql } from '../db/connect.js'
import { withdrawalCall, recordWithdrawal, reserveWithdrawal } from '../withdrawals/withdrawals.js'
import { withdrawalRecovery } from '../withdrawals/recovery.js'
import { findWithdrawal, listWithdrawals } from '../withdrawals/repository.js'
import { type PaymentProcessor, rethrowAsProblem } from '../processor/processor.js'
import { pageRequest } from '../schemas/page.js'
import {
  CreateWithdrawalBody,
  ListWithdrawalsQuery,
  Withdrawal,
  WithdrawalList,
  WithdrawalParams,
} from '../schemas/withdrawal.js'
import { listRoute, retrieveRoute } from './read-routes.js'

/** `clock`: what time it is for the balance (the service's is the system's; tests move it). */
export default async function withdrawalRoutes(
  base: FastifyInstance,
  options: { sql: Sql; processor: PaymentProcessor; clock: () => Date },
) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const { sql, processor, clock } = options

  // Phases (src/withdrawals/withdrawals.ts): claim; reserve (fenced by the claim); call out; record and complete.
  // An unknown outcome of the call is settled by withdrawalRecovery (src/withdrawals/recovery.ts).
  const idempotency = { required: true, recovery: withdrawalRecovery(processor, sql) }
  const create = {
    operationId: 'createWithdrawal',
    client: 'withdrawals.create',
    tag: 'Withdrawals' as const,
    summary: 'Pay out of the balance',
    bodyExample: { amount_cents: 5000, currency: 'usd' },
    responses: {
      201: { description: 'The withdrawal, paid or failed.', schema: Withdrawal, headers: ['Location' as const] },
    },
    problems: ['withdrawal-exceeds-balance' as const, 'processor-unavailable' as const, 'processor-refused' as const],
  }
  app.post(
    '/withdrawals',
    { schema: { body: CreateWithdrawalBody }, config: { idempotency, openapi: create } },
    async (request, reply) =>
      reply.idempotent(async (operation) => {
        const withdrawal = await operation.reserve((tx) =>
          reserveWithdrawal(tx, request.account.id, request.body, operation.id, clock()),
        )
        const outcome = await operation
          .callOut((idempotencyKey) =>
            processor.withdrawal(withdrawalCall(withdrawal, request.account.processorAccount, idempotencyKey)),
          )
          .catch(rethrowAsProblem)
        return operation.complete((tx) => recordWithdrawal(tx, withdrawal, outcome))
      }),
  )

  const names = { one: 'withdrawal', many: 'withdrawals', client: 'withdrawals' }
  retrieveRoute(app, names, {
    url: '/withdrawals/:id',
    params: WithdrawalParams,
    schema: Withdrawal,
    operationId: 'getWithdrawal',
    tag: 'Withdrawals',
    find: (accountId, params) => findWithdrawal(sql, accountId, params.id),
  })
  listRoute(app, names, {
    url: '/withdrawals',
    query: ListWithdrawalsQuery,
    schema: WithdrawalList,
    operationId: 'listWithdrawals',
    tag: 'Withdrawals',
    list: (accountId, query) => listWithdrawals(sql, accountId, pageRequest(query)),
  })
}
