// The graphile-worker runners: one for webhook deliveries (woken by the events_fan_out trigger), one for the work
// that settles money and keeps house, on crontab schedules under stable identifiers: the tasks of
// src/worker/tasks.ts (the recovery of abandoned claims, the expiry of authorizations, the reconciliation with the
// processor, the expired-key reaper, the sweep of overdue deliveries, the reaping of old events, the roll of settled
// balances).
import { EventEmitter } from 'node:events'
import { hostname } from 'node:os'
import { Logger, parseCronItems, run, type Runner, type RunnerOptions, type WorkerEvents } from 'graphile-worker'
import type { Logger as Pino } from 'pino'
import { idempotencyTiming, retryScheduleMs, type Config } from '../config.js'
import type { Sql } from '../db/connect.js'
import { graphilePool, isWritable } from '../db/graphile-pool.js'
import { workerJobFailures } from '../observability/metrics.js'
import { deliverWebhook, type DeliverySettings } from '../webhooks/deliver.js'
import { DELIVER_TASK } from '../webhooks/deliveries.js'
import { SWEEP_TASK } from '../webhooks/sweep.js'
import type { PaymentProcessor } from '../processor/processor.js'
import type { RecoverySettings } from '../recovery/recover-abandoned-claims.js'
import { RECOVER_TASK } from '../idempotency/recovery.js'
import type { Timing } from '../idempotency/store.js'
import { recoveries } from '../recovery/registry.js'
import { scheduledTasks } from './tasks.js'
import { type RunningJob, startWatchdog } from './watchdog.js'
import { type ChargeSettings, chargeSettingsOf } from '../processor/pricing.js'

export interface WorkerOptions {
  connectionString: string
  /** Through a transaction pooler: no prepared statements, and jobs found by polling (LISTEN does not pass). */
  transactionPooling?: boolean
  sql: Sql
  processor: PaymentProcessor
  log: Pino
  concurrency?: number
  reaper: { schedule: string; batchSize: number }
  recovery: RecoverySettings & { schedule: string }
  /** The keys' timing, as the API has it: what a task that moves money gives its KeyedTasks (docs/extending.md). */
  idempotency: Timing
  webhooks: DeliverySettings
  events: { retentionDays: number }
  charges: ChargeSettings
  reconciliation: { schedule: string; compareSchedule: string }
  liveness: { deadAfterSeconds: number; behindAfterSeconds: number }
}

/** The worker's settings from the service's configuration. */
export function workerOptions(
  config: Config,
  database: { url: string; sql: Sql },
  processor: PaymentProcessor,
  log: Pino,
): WorkerOptions {
  return {
    connectionString: database.url,
    transactionPooling: config.DATABASE_TRANSACTION_POOLING,
    sql: database.sql,
    processor,
    log: log.child({ component: 'worker' }),
    reaper: { schedule: config.REAPER_SCHEDULE, batchSize: config.REAPER_BATCH_SIZE },
    recovery: {
      schedule: config.RECOVERY_SCHEDULE,
      graceSeconds: config.RECOVERY_GRACE_SECONDS,
      leaseSeconds: config.IDEMPOTENCY_LEASE_SECONDS,
      batchSize: config.RECOVERY_BATCH_SIZE,
    },
    idempotency: idempotencyTiming(config),
    concurrency: config.WORKER_CONCURRENCY,
    webhooks: {
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      retryScheduleMs: retryScheduleMs(config.WEBHOOK_RETRY_SCHEDULE),
      allowPrivateUrls: config.WEBHOOK_ALLOW_PRIVATE_URLS ?? false,
    },
    events: { retentionDays: config.EVENT_RETENTION_DAYS },
    charges: chargeSettingsOf(config),
    reconciliation: { schedule: config.RECONCILE_SCHEDULE, compareSchedule: config.COMPARE_SCHEDULE },
    liveness: {
      deadAfterSeconds: config.WORKER_DEAD_AFTER_SECONDS,
      behindAfterSeconds: config.SETTLEMENT_BEHIND_SECONDS,
    },
  }
}

/** The worker as the server holds it: two graphile-worker runners (see startWorker), stopped and watched as one. */
export interface Worker {
  /** Settles when either runner stops: by stop(), or by itself (a failure, another schema's breaking migration). */
  promise: Promise<void>
  addJob: Runner['addJob']
  /** Whether both runners' pools reach a writable primary now (after a failover: the new one). */
  writable(): Promise<boolean>
  /** Why the worker is not ready although it runs (settlement is behind: src/worker/watchdog.ts), or undefined. */
  notReady(): string | undefined
  stop(): Promise<void>
}

// Money-settling and housekeeping jobs run on a runner of their own, with capacity nothing else can take: a
// backlog of webhook deliveries to slow or dead endpoints must never delay the recovery of an unknown outcome
// or the expiry of an authorization. A graphile-worker runner only takes jobs of the tasks it knows.
const SETTLEMENT_CONCURRENCY = 3

// How long one delivery job goes on with its endpoint's next due deliveries (src/webhooks/deliver.ts): long enough
// to drain a backlog without a job per delivery, short enough that a stop (which waits for running jobs) is quick.
const HAND_OVER_MS = 5000

export async function startWorker(options: WorkerOptions): Promise<Worker> {
  const { sql, log, recovery } = options
  const settle = recoveries(options.processor, sql, options.charges)
  const tasks = scheduledTasks({ ...options, recoveries: settle })
  const settlement = await startRunner(options, 'payments-api worker', SETTLEMENT_CONCURRENCY, {
    taskList: Object.fromEntries(tasks.map((task) => [task.name, (_payload, helpers) => task.run(helpers)])),
    // Each in a queue of its own unless it says otherwise, so that however many workers run, one reaper and one
    // recovery run at a time.
    parsedCronItems: parseCronItems(
      tasks.map((task) => ({
        task: task.name,
        match: task.schedule,
        identifier: task.name,
        options: { queueName: task.queue ?? task.name },
      })),
    ),
  })
  const deliveries = await startRunner(options, 'payments-api webhooks', options.concurrency ?? 10, {
    // Deliveries of one endpoint share a queue (one at a time), so a hanging endpoint holds one slot at most.
    taskList: {
      [DELIVER_TASK]: async (payload, helpers) => {
        const deliveryId = (payload as { delivery_id?: unknown } | null)?.delivery_id
        if (typeof deliveryId !== 'string') throw new Error(`${DELIVER_TASK}: payload has no delivery_id`)
        await deliverWebhook(sql, deliveryId, options.webhooks, log.child({ task: DELIVER_TASK }), {
          ms: HAND_OVER_MS,
          signal: helpers.abortSignal,
        })
      },
    },
  }).catch(async (error: unknown) => {
    await settlement.stop()
    throw error
  })
  // A start-up that fails from here on stops both runners, so that one tried again (src/db/start-up.ts) does
  // not leave them running beside its own.
  const watchdog = await (async () => {
    // A restarted service first settles what its predecessor left behind (a crash between a processor call and
    // its commit leaves a claim no request will end), rather than waiting for the next scheduled run.
    await settlement.addJob(RECOVER_TASK, {}, { jobKey: RECOVER_TASK, queueName: RECOVER_TASK })
    await settlement.addJob(SWEEP_TASK, {}, { jobKey: SWEEP_TASK, queueName: SWEEP_TASK })
    return startWatchdog(
      sql,
      {
        ids: () => [...settlement.poolIds, ...deliveries.poolIds],
        running: () => [...settlement.running.values(), ...deliveries.running.values()],
      },
      {
        ...options.liveness,
        graceSeconds: recovery.graceSeconds,
        processName: `${hostname()}:${process.pid}`,
      },
      log.child({ component: 'watchdog' }),
    )
  })().catch(async (error: unknown) => {
    await Promise.allSettled([settlement.stop(), deliveries.stop()])
    throw error
  })
  return {
    promise: Promise.race([settlement.promise, deliveries.promise]),
    addJob: settlement.addJob,
    writable: async () => (await Promise.all([settlement.writable(), deliveries.writable()])).every(Boolean),
    notReady: watchdog.notReady,
    stop: async () => {
      // The runners first: each releases its locks as it stops; then the watchdog forgets their pools.
      await Promise.all([settlement.stop(), deliveries.stop()])
      await watchdog.stop()
    },
  }
}

/** One graphile-worker runner on a pool of its own, ended once the runner has stopped (src/db/graphile-pool.ts). */
async function startRunner(
  options: WorkerOptions,
  applicationName: string,
  concurrency: number,
  work: Pick<RunnerOptions, 'taskList' | 'parsedCronItems'>,
): Promise<Runner & { writable(): Promise<boolean>; poolIds: string[]; running: Map<string, RunningJob> }> {
  const { log } = options
  // The ids under which this runner's pool locks jobs, for its heartbeat, and the jobs it runs now: a lock it
  // holds on any other job is one it no longer uses (src/worker/liveness.ts).
  const poolIds: string[] = []
  const running = new Map<string, RunningJob>()
  const events: WorkerEvents = new EventEmitter()
  events.on('pool:create', ({ workerPool }) => poolIds.push(workerPool.id))
  events.on('job:start', ({ job }) => running.set(job.id, { id: job.id, task: job.task_identifier, since: Date.now() }))
  events.on('job:complete', ({ job }) => running.delete(job.id))
  const pgPool = graphilePool(options.connectionString, {
    applicationName,
    max: concurrency + 2,
    // The message and code say it all; the error also carries pg's whole client object, which pino would print.
    onError: (error) =>
      log.warn({ code: (error as { code?: string }).code }, `worker connection failed: ${error.message}`),
  })
  const runner = await run({
    pgPool,
    concurrency,
    noPreparedStatements: options.transactionPooling ?? false,
    // The server owns SIGTERM: it drains HTTP first, then stops the worker.
    noHandleSignals: true,
    logger: pinoLogger(log),
    // Without cron items of its own, a runner must not read the crontab file either (an empty `crontab` string
    // still made it look for ./crontab, and log at info that it could not).
    parsedCronItems: [],
    events,
    ...work,
  }).catch(async (error: unknown) => {
    await pgPool.end()
    throw error
  })
  // Every failed attempt (job:error), not only the last one (job:failed, after max_attempts): a failure that is
  // retried is still a failure an operator wants to see.
  runner.events.on('job:error', ({ job }) => workerJobFailures.inc({ task: job.task_identifier }))
  const stopRunner = runner.stop
  runner.stop = async (reason) => {
    try {
      await stopRunner(reason)
    } finally {
      await pgPool.end()
    }
  }
  return Object.assign(runner, { writable: () => isWritable(pgPool), poolIds, running })
}

// A job that completed is routine (one a minute per cron task on an idle server): debug, not info. Failures,
// retries and everything else graphile-worker says keep their level.
const ROUTINE = /^Completed task /

function pinoLogger(log: Pino): Logger {
  return new Logger((scope) => (level, message, meta) => {
    const pinoLevel =
      level === 'warning'
        ? 'warn'
        : level === 'error'
          ? 'error'
          : level === 'info' && !ROUTINE.test(message)
            ? 'info'
            : 'debug'
    log[pinoLevel]({ worker: scope, ...meta }, message)
  })
}
