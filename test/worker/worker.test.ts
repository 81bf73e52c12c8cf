// The embedded graphile-worker: every task of src/worker/tasks.ts is scheduled under its name, and the reaper runs
// as a real job.
import { parseCronItems } from 'graphile-worker'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAccount } from '../../src/accounts/api-keys.js'
import { createSimulatedProcessor } from '../../src/processor/simulated.js'
import { RECOVER_TASK } from '../../src/idempotency/recovery.js'
import { REAP_TASK } from '../../src/idempotency/reap-expired-keys.js'
import { scheduledTasks } from '../../src/worker/tasks.js'
import { startWorker, workerOptions, type Worker } from '../../src/worker/worker.js'
import { loadConfig } from '../../src/config.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { warnLines } from '../helpers/log-lines.js'
import { until } from '../helpers/system.js'

let database: TestDatabase
let worker: Worker
let tasks: ReturnType<typeof scheduledTasks>

beforeAll(async () => {
  database = await createTestDatabase()
  const config = { ...loadConfig({}), REAPER_BATCH_SIZE: 2 }
  const options = workerOptions(
    config,
    database,
    createSimulatedProcessor({ sql: database.sql }),
    pino({ level: 'silent' }),
  )
  tasks = scheduledTasks({ ...options, recoveries: [] })
  worker = await startWorker(options)
})
afterAll(async () => {
  await worker.stop()
  await database.drop()
})

describe('the worker', () => {
  it('when its tasks are listed, then each has a name of its own and a schedule graphile-worker reads', () => {
    const names = tasks.map((task) => task.name)
    expect(new Set(names).size).toBe(names.length)
    expect(names).toEqual(expect.arrayContaining([REAP_TASK, RECOVER_TASK]))
    for (const task of tasks) expect(() => parseCronItems([{ task: task.name, match: task.schedule }])).not.toThrow()
    // One at a time per queue: each task alone, but the comparison waits for a read of the events it depends on.
    const queues = tasks.map((task) => task.queue ?? task.name)
    expect(queues.length - new Set(queues).size).toBe(1)
  })

  it('when it starts, then every task of the list is on the crontab under its name, and nothing else', async () => {
    // Cron registers what it knows a moment after start.
    const known = async () =>
      (await database.sql<{ identifier: string }[]>`select identifier from graphile_worker._private_known_crontabs`)
        .map((row) => row.identifier)
        .sort()
    await until(async () => (await known()).length === tasks.length)
    expect(await known()).toEqual(tasks.map((task) => task.name).sort())
  })

  it('when a reaper job runs, then expired completed keys are deleted, and live and unsettled ones kept', async () => {
    const { account_id: accountId } = await createAccount(database.sql, 'Worker')
    await database.sql`
      insert into idempotency_keys (account_id, endpoint, key, fingerprint, operation_id, completed_at,
        response_status, response_headers, response_body, expires_at)
      select ${accountId}, 'POST /v1/charges', 'key-' || n, decode(repeat('00', 32), 'hex'), gen_random_uuid(), now(),
        201, '{}', '\\x7b7d',
             case when n <= 5 then now() - interval '1 minute' else now() + interval '1 day' end
      from generate_series(1, 7) n`
    // Expired but unsettled (its lease ended after a processor call nobody has settled): it never expires.
    await database.sql`
      insert into idempotency_keys (account_id, endpoint, key, fingerprint, operation_id, claim_token, locked_until,
        expires_at)
      values (${accountId}, 'POST /v1/charges', 'key-8', decode(repeat('00', 32), 'hex'), gen_random_uuid(),
        gen_random_uuid(), now(), now() - interval '1 minute')`

    await database.sql`select graphile_worker.add_job(${REAP_TASK})`

    await until(
      async () => (await database.sql`select 1 from idempotency_keys where account_id = ${accountId}`).length === 3,
    )
    const left = await database.sql`select key from idempotency_keys where account_id = ${accountId} order by key`
    expect(left.map((row) => row.key)).toEqual(['key-6', 'key-7', 'key-8'])
  })

  it('when its connections are terminated while it completes jobs, then it logs one-line warnings, does not crash, and goes on working', async () => {
    const { log: warnLog, lines } = warnLines()
    const watched = await startWorker(
      workerOptions(
        // A completion lost with its connection leaves the job locked until the watchdog frees it: soon, here.
        { ...loadConfig({}), WORKER_DEAD_AFTER_SECONDS: 3 },
        database,
        createSimulatedProcessor({ sql: database.sql }),
        warnLog,
      ),
    )
    const terminate = () => database.sql`select pg_terminate_backend(pid) from pg_stat_activity
                                        where datname = current_database() and application_name = 'payments-api worker'`
    try {
      // Jobs completing all the time while the worker's connections are cut again and again: a completion whose
      // connection is lost is logged rather than left as an unhandled rejection that would end the process
      // (patches/graphile-worker+0.17.3.patch; Vitest fails the run on an unhandled rejection), and the watchdog
      // frees the job it kept locked, which then runs again.
      await database.sql`select graphile_worker.add_job(${REAP_TASK}) from generate_series(1, 300)`
      const stopAt = Date.now() + 2000
      while (Date.now() < stopAt) {
        await terminate()
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      const failures = lines.filter((line) => String(line.msg).startsWith('worker connection failed'))
      // Warnings, with PostgreSQL's code when there is one (57P01: terminated by an administrator), never pg's client.
      expect(failures.map((line) => line.code)).toContain('57P01')
      for (const line of failures) {
        expect(line).toMatchObject({ level: 40, component: 'worker' })
        expect(JSON.stringify(line)).not.toContain('connectionParameters')
      }
      // Every job is recorded as done: none is left locked, to run again only when its lock expires hours later.
      const reapJobs = () => database.sql`select 1 from graphile_worker._private_jobs
                                          where task_id = (select id from graphile_worker._private_tasks where
                                            identifier = ${REAP_TASK})`
      await until(async () => (await reapJobs()).length === 0, 60_000)
      // Still working: a job added now runs to completion.
      const [{ id }] = (await database.sql<
        { id: string }[]
      >`select (graphile_worker.add_job(${REAP_TASK}, '{}'::json, max_attempts => 1)).id`) as unknown as [
        { id: string },
      ]
      await until(
        async () => (await database.sql`select 1 from graphile_worker._private_jobs where id = ${id}`).length === 0,
      )
    } finally {
      await watched.stop()
    }
  })
})
