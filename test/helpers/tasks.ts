// A worker task run from a test for one account at a chosen time (src/worker/tasks.ts, runFor): the test's own
// rows only, and no dates moved in SQL. Built with the app's processor and settings, as the worker builds it.
import { pino } from 'pino'
import { loadConfig } from '../../src/config.js'
import { recoverAbandonedClaims, type RecoveryRun } from '../../src/recovery/recover-abandoned-claims.js'
import { recoveries } from '../../src/recovery/registry.js'
import { scheduledTasks, type TaskScope } from '../../src/worker/tasks.js'
import { workerOptions } from '../../src/worker/worker.js'
import type { TestContext } from './app.js'

export async function runTaskFor(context: TestContext, name: string, scope: TaskScope): Promise<void> {
  const options = workerOptions(
    loadConfig({}),
    { url: context.databaseUrl, sql: context.sql },
    context.processor,
    pino({ level: 'silent' }),
  )
  const tasks = scheduledTasks({
    ...options,
    charges: context.chargeSettings,
    recoveries: recoveries(context.processor, context.sql, context.chargeSettings),
  })
  const task = tasks.find((each) => each.name === name)
  if (!task) throw new Error(`no task ${name} in src/worker/tasks.ts`)
  if (!task.runFor) throw new Error(`task ${name} cannot run for one account: give it runFor (src/worker/tasks.ts)`)
  await task.runFor(scope)
}

/** One run of the recovery worker with the app's Recoveries and no grace period: every claim whose lease ended. */
export function recoverNow(context: TestContext): Promise<RecoveryRun> {
  return recoverAbandonedClaims(
    context.sql,
    recoveries(context.processor, context.sql, context.chargeSettings),
    { graceSeconds: 0, leaseSeconds: 30, batchSize: 100 },
    pino({ level: 'silent' }),
  )
}
