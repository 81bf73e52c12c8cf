// What both baselines share with the service, so that only idempotency differs: Fastify, the same pool size,
// the same API-key lookup (uncached, as a simple implementation does it), the same simulated processor with its
// ledger, and the same charge (and event) rows into the same tables, inserted as a simple implementation does it.
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import { findAccountByApiKey } from '../../src/accounts/api-keys.js'
import { insertCharge, newChargeRow, toCharge } from '../../src/charges/repository.js'
import { connect, type Sql } from '../../src/db/connect.js'
import { insertEvent } from '../../src/events/events.js'
import { chargeIdOf } from '../../src/charges/calls.js'
import { createSimulatedProcessor } from '../../src/processor/simulated.js'
import type { CreateChargeBody } from '../../src/schemas/charge.js'

export interface Baseline {
  app: FastifyInstance
  sql: Sql
  /**
   * Calls the processor and inserts the charge: the work every implementation does. With `event`, also the
   * event row the service writes with each charge (its fan-out trigger included), in the charge's transaction.
   */
  charge(request: FastifyRequest, options?: { event?: boolean }): Promise<{ status: number; body: unknown }>
}

export async function baseline(): Promise<Baseline> {
  const sql = connect(process.env.DATABASE_URL!, { max: Number(process.env.DATABASE_POOL_SIZE ?? 10) })
  const processor = createSimulatedProcessor({ sql })
  const app = Fastify({ logger: false })
  app.get('/healthz', async () => ({ status: 'ok' }))
  return {
    app,
    sql,
    async charge(request, options = {}) {
      const input = request.body as CreateChargeBody
      const accountId = (request as FastifyRequest & { accountId: string }).accountId
      const idempotencyKey = String(request.headers['idempotency-key'] ?? crypto.randomUUID())
      const outcome = await processor.charge({
        chargeId: chargeIdOf(idempotencyKey),
        amountCents: input.amount_cents,
        currency: input.currency,
        source: input.source,
        accountId,
        processorAccount: null,
        idempotencyKey,
      })
      const row = newChargeRow(chargeIdOf(idempotencyKey), { id: accountId, processorAccount: null }, input, outcome)
      const charge = toCharge(row)
      if (options.event) {
        await sql.begin((tx) =>
          Promise.all([
            insertCharge(tx, row),
            insertEvent(tx, accountId, 'charge.succeeded', { object: charge }, row.created_at),
          ]),
        )
      } else {
        await insertCharge(sql, row)
      }
      return { status: 201, body: charge }
    },
  }
}

/** The same Bearer lookup the service makes, on every request. */
export async function authenticate(sql: Sql, request: FastifyRequest): Promise<boolean> {
  const account = await findAccountByApiKey(sql, (request.headers.authorization ?? '').slice('Bearer '.length))
  if (account) (request as FastifyRequest & { accountId: string }).accountId = account.id
  return account !== undefined
}

export async function listen(app: FastifyInstance): Promise<void> {
  const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' })
  console.log(`listening at ${address}`)
  // Exits on the benchmark's SIGTERM rather than being killed by it, so that --cpu-prof (BENCH_NODE_ARGS) is written.
  process.once('SIGTERM', () => process.exit(0))
}
