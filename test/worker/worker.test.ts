// The embedded graphile-worker: the reaper is scheduled under a stable identifier and runs as a real job.
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runner } from 'graphile-worker'
import { createAccount } from '../../src/accounts/api-keys.js'
import { createSimulatedProcessor } from '../../src/processor/simulated.js'
import { RECOVER_TASK } from '../../src/recovery/recovery.js'
import { REAP_TASK } from '../../src/worker/reap-expired-keys.js'
import { startWorker, workerOptions } from '../../src/worker/worker.js'
import { loadConfig } from '../../src/config.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { until } from '../helpers/system.js'

let database: TestDatabase
let worker: Runner

beforeAll(async () => {
  database = await createTestDatabase()
  const config = { ...loadConfig({}), REAPER_BATCH_SIZE: 2 }
  worker = await startWorker(workerOptions(config, database, createSimulatedProcessor({ sql: database.sql }), pino({ level: 'silent' })))
})
afterAll(async () => {
  await worker.stop()
  await database.drop()
})

describe('the worker', () => {
  it('when it starts, then the reaper and the recovery are on the crontab under their identifiers', async () => {
    // Cron registers what it knows a moment after start.
    for (const identifier of [REAP_TASK, RECOVER_TASK]) {
      await until(async () => (await database.sql`select 1 from graphile_worker._private_known_crontabs where identifier = ${identifier}`).length === 1)
    }
  })

  it('when a reaper job runs, then expired keys are deleted and live ones kept', async () => {
    const { account_id: accountId } = await createAccount(database.sql, 'Worker')
    await database.sql`
      insert into idempotency_keys (account_id, endpoint, key, fingerprint, operation_id, claim_token, locked_until, expires_at)
      select ${accountId}, 'POST /v1/charges', 'key-' || n, decode(repeat('00', 32), 'hex'), gen_random_uuid(), gen_random_uuid(), now(),
             case when n <= 5 then now() - interval '1 minute' else now() + interval '1 day' end
      from generate_series(1, 7) n`

    await database.sql`select graphile_worker.add_job(${REAP_TASK})`

    await until(async () => (await database.sql`select 1 from idempotency_keys where account_id = ${accountId}`).length === 2)
    const left = await database.sql`select key from idempotency_keys where account_id = ${accountId} order by key`
    expect(left.map((row) => row.key)).toEqual(['key-6', 'key-7'])
  })
})
