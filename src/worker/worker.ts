// The graphile-worker runner embedded in the server process: the expired-key reaper and the recovery of
// abandoned claims, each on its crontab schedule under a stable identifier.
import { Logger, parseCronItems, run, type Runner } from 'graphile-worker'
import type { Logger as Pino } from 'pino'
import type { Config } from '../config.js'
import type { Sql } from '../db/connect.js'
import { reaperDeletedKeys, recoveryClaims, workerJobFailures } from '../observability/metrics.js'
import type { PaymentProcessor } from '../processor/processor.js'
import { recoverAbandonedClaims, type RecoverySettings } from '../recovery/recover-abandoned-claims.js'
import { RECOVER_TASK } from '../recovery/recovery.js'
import { recoveries } from '../recovery/registry.js'
import { REAP_TASK, reapExpiredKeys } from './reap-expired-keys.js'

export interface WorkerOptions {
  connectionString: string
  sql: Sql
  processor: PaymentProcessor
  log: Pino
  reaper: { schedule: string; batchSize: number }
  recovery: RecoverySettings & { schedule: string }
}

/** The worker's settings from the service's configuration. */
export function workerOptions(config: Config, database: { url: string; sql: Sql }, processor: PaymentProcessor, log: Pino): WorkerOptions {
  return {
    connectionString: database.url,
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
  }
}

export async function startWorker(options: WorkerOptions): Promise<Runner> {
  const { sql, log, reaper, recovery } = options
  const settle = recoveries(options.processor)
  const runner = await run({
    connectionString: options.connectionString,
    concurrency: 2,
    maxPoolSize: 3,
    // The server owns SIGTERM: it drains HTTP first, then stops the worker.
    noHandleSignals: true,
    logger: pinoLogger(log),
    taskList: {
      [REAP_TASK]: async (_payload, helpers) => {
        // Paced at a tenth of the time: measured (npm run bench -- --reaper) to keep pace with the peak write rate
        // many times over while leaving the requests that share the database their latency.
        const deleted = await reapExpiredKeys(sql, { batchSize: reaper.batchSize, maxSeconds: 50, dutyCycle: 0.1, signal: helpers.abortSignal })
        reaperDeletedKeys.inc(deleted)
        log.info({ task: REAP_TASK, deleted }, 'reaped expired idempotency keys')
      },
      [RECOVER_TASK]: async () => {
        const run = await recoverAbandonedClaims(sql, settle, recovery, log.child({ task: RECOVER_TASK }))
        for (const result of ['settled', 'released', 'failed'] as const) recoveryClaims.inc({ result }, run[result])
        if (run.settled || run.released || run.failed) log.info({ task: RECOVER_TASK, ...run }, 'recovered abandoned claims')
        // A failure is retried on the claim's own backoff, not by failing the job.
      },
    },
    parsedCronItems: parseCronItems([
      // Each in a queue of its own, so that however many workers run, one reaper and one recovery run at a time.
      { task: REAP_TASK, match: reaper.schedule, identifier: REAP_TASK, options: { queueName: REAP_TASK } },
      { task: RECOVER_TASK, match: recovery.schedule, identifier: RECOVER_TASK, options: { queueName: RECOVER_TASK } },
    ]),
  })
  runner.events.on('job:failed', ({ job }) => workerJobFailures.inc({ task: job.task_identifier }))
  // A restarted service first settles what its predecessor left behind (a crash between a processor call and
  // its commit leaves a claim no request will end), rather than waiting for the next scheduled run.
  await runner.addJob(RECOVER_TASK, {}, { jobKey: RECOVER_TASK, queueName: RECOVER_TASK })
  return runner
}

function pinoLogger(log: Pino): Logger {
  return new Logger((scope) => (level, message, meta) => {
    const pinoLevel = level === 'warning' ? 'warn' : level === 'error' ? 'error' : level === 'info' ? 'info' : 'debug'
    log[pinoLevel]({ worker: scope, ...meta }, message)
  })
}
