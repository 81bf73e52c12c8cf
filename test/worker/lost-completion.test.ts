// graphile-worker records a job's completion after the job ran, and when that write fails for good the job stays
// locked by a pool that is alive and well: a recovery job left so holds the recovery queue, and graphile-worker
// would free it only after four hours. Found by the fault run (a completion refused by a node that had just turned
// read-only). The watchdog frees the locks its own pools hold on jobs none of its workers runs
// (src/worker/liveness.ts), and the job runs again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { RECOVER_TASK } from '../../src/idempotency/recovery.js'
import { createSimulatedProcessor } from '../../src/processor/simulated.js'
import { startWorker, workerOptions, type Worker } from '../../src/worker/worker.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { warnLines } from '../helpers/log-lines.js'
import { until } from '../helpers/system.js'

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database.drop()
})

/** A worker whose log lines (warn and above) the test reads; no scheduled recovery run gets in the way. */
async function startWatchedWorker(
  deadAfterSeconds: number,
): Promise<{ worker: Worker; lines: Record<string, unknown>[] }> {
  const { log: warnLog, lines } = warnLines()
  const config = { ...loadConfig({}), WORKER_DEAD_AFTER_SECONDS: deadAfterSeconds, RECOVERY_SCHEDULE: '0 0 1 1 *' }
  const worker = await startWorker(
    workerOptions(config, database, createSimulatedProcessor({ sql: database.sql }), warnLog),
  )
  return { worker, lines }
}

/**
 * Adds a recovery job under `jobKey`; resolves with its id and a reader of who locks it and its queue (undefined once
 * it is done).
 */
async function addRecoveryJob(jobKey: string) {
  const { sql } = database
  const [job] = await sql<{ id: string }[]>`
    select id from graphile_worker.add_job(${RECOVER_TASK}, '{}'::json, queue_name => ${RECOVER_TASK}, job_key =>
      ${jobKey})`
  const lockOf = async () => {
    const [row] = await sql<{ job: string | null; queue: string | null }[]>`
      select j.locked_by as job, q.locked_by as queue
      from graphile_worker._private_jobs j join graphile_worker._private_job_queues q on q.id = j.job_queue_id
      where j.id = ${job!.id}`
    return row
  }
  return { id: job!.id, lockOf }
}

/** Makes the completion (a delete) of the job under `jobKey` fail with `sqlstate`; returns how to stop refusing. */
async function refuseCompletion(jobKey: string, sqlstate: string) {
  const { sql } = database
  await sql.unsafe(`
    create or replace function refuse_completion() returns trigger language plpgsql as $$
    begin
      if old.key = '${jobKey}' then
        raise exception 'the test refuses this completion' using errcode = '${sqlstate}';
      end if;
      return old;
    end $$`)
  await sql`create trigger refuse_completion before delete on graphile_worker._private_jobs for each row execute
    function refuse_completion()`
  return { stop: async () => void (await sql`drop trigger refuse_completion on graphile_worker._private_jobs`) }
}

describe('a job whose completion could not be recorded', () => {
  it.each([
    ['P0001', 'an error graphile-worker does not retry'],
    ['25006', 'a node that is read-only now (a demoted primary, mid-failover)'],
  ])(
    'when the database refuses it (%s: %s), then the worker frees the lock it kept on the job and its queue, and ' +
      'the job runs again',
    async (sqlstate) => {
      const { worker, lines } = await startWatchedWorker(3)
      try {
        const jobKey = `refused-${sqlstate}`
        const refusing = await refuseCompletion(jobKey, sqlstate)
        const job = await addRecoveryJob(jobKey)
        // graphile-worker does not await the completion: without the patch's catch, this refusal was an unhandled
        // rejection that ended the process (and this test run).
        await until(async () =>
          lines.some((line) => String(line.msg).startsWith(`Failed to record the completion of job ${job.id}`)),
        )
        // Ran, and still locked by the pool that ran it: no other recovery can run in the queue.
        expect((await job.lockOf())?.queue).toMatch(/^pool-/)
        await refusing.stop()

        // Freed after WORKER_DEAD_AFTER_SECONDS, run again, and this time recorded as done.
        await until(async () => (await job.lockOf()) === undefined)
        const [queue] = await database.sql<{ locked_by: string | null }[]>`
        select locked_by from graphile_worker._private_job_queues where queue_name = ${RECOVER_TASK}`
        expect(queue?.locked_by ?? null).toBeNull()
        expect(lines.find((line) => String(line.msg).includes('none of its workers runs'))).toMatchObject({
          level: 40,
          jobs: 1,
          queues: 1,
          component: 'watchdog',
        })
      } finally {
        await worker.stop()
      }
    },
  )
})
