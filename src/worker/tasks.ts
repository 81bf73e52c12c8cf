// The worker's scheduled tasks, each with its schedule and its queue, in one list: the settlement runner takes its
// task list and its crontab from here (src/worker/worker.ts), so a task cannot be written without being scheduled,
// nor scheduled without being written. A fork's task is one more entry (docs/extending.md);
// test/worker/tasks.test.ts holds the list to its rules (one name each, a schedule graphile-worker reads).
import type { JobHelpers } from 'graphile-worker'
import type { Logger } from 'pino'
import { EXPIRE_TASK, expireAuthorizations } from '../charges/expire-authorizations.js'
import type { Sql } from '../db/connect.js'
import { REAP_EVENTS_TASK, reapOldEvents } from '../events/reap-events.js'
import { REAP_TASK, reapExpiredKeys } from '../idempotency/reap-expired-keys.js'
import { RECOVER_TASK, type Recovery } from '../idempotency/recovery.js'
import type { Timing } from '../idempotency/store.js'
import type { ChargeSettings } from '../processor/pricing.js'
import { ROLL_TASK, rollBalances } from '../ledger/settled-balances.js'
import { reaperDeletedKeys, recoveryClaims } from '../observability/metrics.js'
import { COMPARE_TASK, compareTask, RECONCILE_TASK, reconcileTask } from '../processor-events/tasks.js'
import type { PaymentProcessor } from '../processor/processor.js'
import { recoverAbandonedClaims, type RecoverySettings } from '../recovery/recover-abandoned-claims.js'
import { SWEEP_TASK, sweepDeliveries } from '../webhooks/sweep.js'

export interface ScheduledTask {
  /** graphile-worker's task identifier, and the identifier of its schedule. */
  name: string
  /** When it runs: the time fields of a crontab line, as graphile-worker reads them. */
  schedule: string
  /** Tasks of one queue run one at a time, however many workers run: by default, each task is its own queue. */
  queue?: string
  run(helpers: JobHelpers): Promise<void>
  /**
   * The same work for one account, as if it were `at` (a test, an operator's replay): a task that moves an
   * account's money has it, so that a test runs it without moving dates in SQL or touching other accounts' rows.
   */
  runFor?(scope: TaskScope): Promise<void>
}

/** One account, at a chosen time. */
export interface TaskScope {
  accountId: string
  at: Date
}

/** What the tasks need: the worker's settings (src/worker/worker.ts, WorkerOptions), and the Recoveries it runs. */
export interface TaskContext {
  sql: Sql
  processor: PaymentProcessor
  log: Logger
  reaper: { schedule: string; batchSize: number }
  recovery: RecoverySettings & { schedule: string }
  /** A task that moves money runs it under a key: new KeyedTasks(sql, idempotency, ...) (docs/extending.md). */
  idempotency: Timing
  events: { retentionDays: number }
  charges: ChargeSettings
  reconciliation: { schedule: string; compareSchedule: string }
  recoveries: Recovery[]
}

export function scheduledTasks(context: TaskContext): ScheduledTask[] {
  const { sql, processor, log, reaper, recovery } = context
  return [
    {
      name: REAP_TASK,
      schedule: reaper.schedule,
      async run(helpers) {
        // Paced at a tenth of the time: measured (npm run bench -- --reaper) to keep pace with the peak write rate
        // many times over while leaving the requests that share the database their latency.
        const deleted = await reapExpiredKeys(sql, {
          batchSize: reaper.batchSize,
          maxSeconds: 50,
          dutyCycle: 0.1,
          signal: helpers.abortSignal,
        })
        reaperDeletedKeys.inc(deleted)
        log[deleted ? 'info' : 'debug']({ task: REAP_TASK, deleted }, 'reaped expired idempotency keys')
      },
    },
    {
      name: RECOVER_TASK,
      schedule: recovery.schedule,
      async run() {
        const run = await recoverAbandonedClaims(sql, context.recoveries, recovery, log.child({ task: RECOVER_TASK }))
        for (const result of ['settled', 'released', 'failed'] as const) recoveryClaims.inc({ result }, run[result])
        if (run.settled || run.released || run.failed)
          log.info({ task: RECOVER_TASK, ...run }, 'recovered abandoned claims')
        // A failure is retried on the claim's own backoff, not by failing the job.
      },
    },
    {
      name: SWEEP_TASK,
      schedule: '* * * * *',
      async run() {
        const woken = await sweepDeliveries(sql, { overdueSeconds: 10 })
        if (woken) log.info({ task: SWEEP_TASK, woken }, 'woke overdue webhook deliveries')
      },
    },
    {
      name: EXPIRE_TASK,
      schedule: '* * * * *',
      async run() {
        const settings = { batchSize: 100, leaseSeconds: 60 }
        const expired = await expireAuthorizations(sql, processor, settings, log.child({ task: EXPIRE_TASK }))
        if (expired) log.info({ task: EXPIRE_TASK, expired }, 'expired uncaptured authorizations')
      },
      async runFor({ accountId, at }) {
        const settings = { batchSize: 100, leaseSeconds: 60, accountId, at }
        await expireAuthorizations(sql, processor, settings, log.child({ task: EXPIRE_TASK, account_id: accountId }))
      },
    },
    {
      name: REAP_EVENTS_TASK,
      schedule: '17 * * * *',
      async run(helpers) {
        const deleted = await reapOldEvents(sql, {
          retentionDays: context.events.retentionDays,
          batchSize: 1000,
          signal: helpers.abortSignal,
        })
        if (deleted) log.info({ task: REAP_EVENTS_TASK, deleted }, 'reaped old events')
      },
    },
    {
      name: ROLL_TASK,
      schedule: '*/10 * * * *',
      async run(helpers) {
        const settings = {
          marginSeconds: 10,
          waitMs: 30_000,
          batchSize: 500,
          maxMs: 60_000,
          // Past the time between two runs: a transaction that has held back more than one.
          warnBehindSeconds: 600,
          signal: helpers.abortSignal,
        }
        const run = await rollBalances(sql, settings, log.child({ task: ROLL_TASK }))
        if (run.rolled) log.info({ task: ROLL_TASK, rolled: run.rolled }, 'rolled settled balances forward')
      },
    },
    // One queue for both: a comparison never runs beside a read of the events it depends on.
    {
      name: RECONCILE_TASK,
      schedule: context.reconciliation.schedule,
      queue: RECONCILE_TASK,
      run: () => reconcileTask(sql, processor.later, context.charges, log.child({ task: RECONCILE_TASK })),
    },
    {
      name: COMPARE_TASK,
      schedule: context.reconciliation.compareSchedule,
      queue: RECONCILE_TASK,
      run: () => compareTask(sql, processor.later, context.charges, log.child({ task: COMPARE_TASK })),
    },
  ]
}
