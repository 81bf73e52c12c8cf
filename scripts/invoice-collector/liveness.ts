// graphile-worker keeps a job whose worker died locked for 4 hours before another worker may run it. Here each
// collector process holds a lease on its worker pool's id, renewed while it lives, and every process hands back
// the jobs of pools whose lease has run out: a killed collector's job runs again within seconds, not hours.
import { EventEmitter } from 'node:events'
import { makeWorkerUtils, type WorkerEvents } from 'graphile-worker'
import type { Pool } from 'pg'
import type { Sql } from '../../src/db/connect.js'

export async function prepareLivenessTable(sql: Sql): Promise<void> {
  await sql`create table if not exists invoice_collector.worker_pools (
    pool_id text primary key check (char_length(pool_id) <= 100),
    alive_until timestamptz not null)`
}

/**
 * Events to pass to graphile-worker's run(), and a start() to call once it runs: it renews this pool's lease
 * every third of `leaseSeconds` and unlocks the jobs of dead pools, until stop().
 */
export function poolLiveness(options: {
  sql: Sql
  pgPool: Pool
  schema: string
  leaseSeconds: number
  log: (message: string) => void
}) {
  const { sql, leaseSeconds } = options
  const events: WorkerEvents = new EventEmitter()
  let poolId: string | undefined
  events.on('pool:create', ({ workerPool }) => {
    poolId = workerPool.id
  })
  let timer: NodeJS.Timeout | undefined

  async function renew() {
    // Before graphile-worker made its pool there is nothing to hold a lease for.
    if (poolId === undefined) return
    await sql`
      insert into invoice_collector.worker_pools (pool_id, alive_until) values (${poolId}, now() + ${leaseSeconds} *
        interval '1 second')
      on conflict (pool_id) do update set alive_until = excluded.alive_until`
  }

  async function unlockDeadPools() {
    // Locked for longer than a lease by a pool with no live lease: that pool is gone (or never said it lived).
    const dead = await sql<{ locked_by: string }[]>`
      select distinct locked_by from ${sql(options.schema)}.jobs j
      where locked_by is not null and locked_at < now() - ${leaseSeconds} * interval '1 second'
        and not exists (select 1 from invoice_collector.worker_pools p where p.pool_id = j.locked_by and p.alive_until
          > now())`
    if (dead.length > 0) {
      const utils = await makeWorkerUtils({ pgPool: options.pgPool, schema: options.schema })
      await utils.forceUnlockWorkers(dead.map((row) => row.locked_by)).finally(() => utils.release())
      options.log(`unlocked the jobs of dead worker pools: ${dead.map((row) => row.locked_by).join(', ')}`)
    }
    await sql`delete from invoice_collector.worker_pools where alive_until < now() - interval '1 hour'`
  }

  return {
    events,
    async start() {
      await renew()
      await unlockDeadPools()
      timer = setInterval(
        () => {
          renew()
            .then(unlockDeadPools)
            .catch((error: unknown) => options.log(`liveness: ${String(error)}`))
        },
        (leaseSeconds * 1000) / 3,
      )
    },
    async stop() {
      clearInterval(timer)
      await sql`delete from invoice_collector.worker_pools where pool_id = ${poolId ?? ''}`
    },
  }
}
