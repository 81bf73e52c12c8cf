// A worker SIGKILLed while it runs the recovery holds the recovery queue's lock, and graphile-worker frees such a
// lock only after four hours: no abandoned claim would be settled meanwhile. The live workers find the dead one
// by its silence (src/worker/liveness.ts) and free its locks; until then, settlement being behind is told by
// readiness, a metric and the log (src/worker/watchdog.ts).
import { afterAll, describe, expect, it } from 'vitest'
import type { ReservedSql } from 'postgres'
import { RECOVER_TASK } from '../../src/idempotency/recovery.js'
import { chargeBody, useTestApp } from '../helpers/app.js'
import { startServer, type ServerProcess } from '../helpers/processes.js'
import { freePort, until } from '../helpers/system.js'

const suite = useTestApp()
const started: ServerProcess[] = []
afterAll(() => {
  for (const server of started) server.child.kill('SIGKILL')
})

// Lookups wait as long as the test holds the processor's ledger; the grace outlasts the processor's timeout.
const workerEnv = () => ({
  DATABASE_URL: suite.context.databaseUrl,
  ROLE: 'worker',
  DATABASE_STATEMENT_TIMEOUT_MS: '60000',
  PROCESSOR_TIMEOUT_MS: '60000',
  RECOVERY_GRACE_SECONDS: '61',
  RECOVERY_SCHEDULE: '0 0 1 1 *',
})
async function startWorkerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const server = await startServer({ ...workerEnv(), ...env })
  started.push(server)
  return server
}

describe('a worker killed while it holds the recovery queue', () => {
  it('when it dies mid-recovery, then settlement is reported behind, and a live worker frees its lock and settles the claim', async () => {
    const user = await suite.context.newAccount()
    const { sql } = suite.context
    const key = 'lost-then-worker-killed'
    expect((await user.post('/v1/charges', chargeBody({ source: 'pm_card_responseLost' }), { key })).statusCode).toBe(
      503,
    )
    // Due now: as if its grace had passed.
    await sql`update idempotency_keys set locked_until = now() - interval '1 hour' where key = ${key}`

    // The first worker takes the claim and asks the processor, whose ledger the test holds: its lookup waits.
    const ledger: ReservedSql = await sql.reserve()
    await ledger`begin`
    await ledger`lock table simulated_processor.operations in access exclusive mode`
    const first = await startWorkerProcess({ WORKER_DEAD_AFTER_SECONDS: '600', SETTLEMENT_BEHIND_SECONDS: '700' })
    await until(async () => {
      const [waiting] = await sql`
        select 1 from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query like
          '%simulated_processor.operations%'`
      return waiting !== undefined
    })
    const [queue] = await sql<
      { locked_by: string | null }[]
    >`select locked_by from graphile_worker._private_job_queues where queue_name = ${RECOVER_TASK}`
    expect(queue!.locked_by).toMatch(/^pool-/)
    first.child.kill('SIGKILL')
    await first.exited
    await ledger`rollback`
    ledger.release()
    // The dead worker's claim on the key lapses (its lease), and the key is overdue again.
    await sql`update idempotency_keys set locked_until = now() - interval '1 hour' where key = ${key}`

    // A second worker that will not call the first dead within the test: the queue stays locked, and it says so.
    const metricsPort = await freePort()
    const second = await startWorkerProcess({
      WORKER_DEAD_AFTER_SECONDS: '600',
      SETTLEMENT_BEHIND_SECONDS: '700',
      METRICS_PORT: String(metricsPort),
    })
    const ready = await fetch(`${second.url}/readyz`)
    expect(ready.status).toBe(503)
    expect(((await ready.json()) as { detail: string }).detail).toMatch(
      /^Settlement is behind: 1 abandoned claim\(s\) overdue, the oldest by \d+ s/,
    )
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
    expect(metrics).toMatch(/^settlement_overdue_claims 1$/m)
    expect(second.output()).toContain('Settlement is behind')
    second.child.kill('SIGTERM')
    expect(await second.exited).toBe(0)

    // A worker that calls a pool dead after 3 s of silence frees the dead pool's locks and settles the claim.
    const third = await startWorkerProcess({ WORKER_DEAD_AFTER_SECONDS: '3' })
    await until(
      async () =>
        (await sql`select 1 from idempotency_keys where key = ${key} and completed_at is not null`).length === 1,
      30_000,
    )
    expect(third.output()).toContain(`worker pools silent for 3 s held jobs`)
    await until(async () => (await fetch(`${third.url}/readyz`)).status === 200)
    const replay = await user.post('/v1/charges', chargeBody({ source: 'pm_card_responseLost' }), { key })
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    const [charges] = await sql<
      { count: number }[]
    >`select count(*)::int as count from charges where account_id = ${user.id}`
    expect(charges!.count).toBe(1)
  }, 180_000)
})
