// GET /v1/balance, GET /v1/balance_transactions and GET /v1/balance_transactions/:id: the ledger as the API shows
// it (src/ledger/repository.ts); each with its entry of openapi.yaml.
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Sql } from '../db/connect.js'
import { balanceOf, findBalanceTransaction, listBalanceTransactions } from '../ledger/repository.js'
import { Problem } from '../problems.js'
import {
  Balance,
  BalanceTransaction,
  BalanceTransactionList,
  BalanceTransactionParams,
  ListBalanceTransactionsQuery,
} from '../schemas/balance.js'
import { pageRequest } from '../schemas/page.js'
import { listBody } from './list-body.js'

export default async function balanceRoutes(
  base: FastifyInstance,
  /** `clock`: what time it is for availability (tests move it; the service reads the system's). */
  options: { sql: Sql; clock: () => Date },
) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const { sql, clock } = options

  app.get(
    '/balance',
    {
      config: {
        openapi: {
          operationId: 'getBalance',
          client: 'balance.retrieve',
          tag: 'Balance',
          summary: 'Retrieve the balance',
          responses: { 200: { description: 'The balance, available and pending, per currency.', schema: Balance } },
        },
      },
    },
    async (request) => balanceOf(sql, request.account.id, clock()),
  )

  app.get(
    '/balance_transactions/:id',
    {
      schema: { params: BalanceTransactionParams },
      config: {
        openapi: {
          operationId: 'getBalanceTransaction',
          client: 'balanceTransactions.retrieve',
          tag: 'Balance',
          summary: 'Retrieve a balance transaction',
          responses: { 200: { description: 'The balance transaction.', schema: BalanceTransaction } },
        },
      },
    },
    async (request) => {
      const found = await findBalanceTransaction(sql, request.account.id, request.params.id, clock())
      if (!found) throw new Problem('resource-not-found', `No balance transaction ${request.params.id}.`)
      return found
    },
  )

  app.get(
    '/balance_transactions',
    {
      schema: { querystring: ListBalanceTransactionsQuery },
      config: {
        openapi: {
          operationId: 'listBalanceTransactions',
          client: 'balanceTransactions.list',
          tag: 'Balance',
          summary: 'List balance transactions, newest first',
          responses: { 200: { description: 'One page of balance transactions.', schema: BalanceTransactionList } },
        },
      },
    },
    async (request) => {
      const { type, source, payout } = request.query
      const page = await listBalanceTransactions(
        sql,
        request.account.id,
        { type, source, payout },
        pageRequest(request.query),
        clock(),
      )
      return listBody(page, 'balance transaction of this account')
    },
  )
}
