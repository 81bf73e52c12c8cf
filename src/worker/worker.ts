// The graphile-worker runner embedded in the server process: runs the scheduled reaper.
import { Logger, parseCronItems, run, type Runner } from 'graphile-worker'
import type { Logger as Pino } from 'pino'
import type { Sql } from '../db/connect.js'
import { REAP_TASK, reapExpiredKeys } from './reap-expired-keys.js'

export async function startWorker(options: {
  connectionString: string
  sql: Sql
  log: Pino
  reaper: { schedule: string; batchSize: number }
}): Promise<Runner> {
  const { sql, log, reaper } = options
  return run({
    connectionString: options.connectionString,
    concurrency: 1,
    maxPoolSize: 2,
    // The server owns SIGTERM: it drains HTTP first, then stops the worker.
    noHandleSignals: true,
    logger: pinoLogger(log),
    taskList: {
      [REAP_TASK]: async () => {
        const deleted = await reapExpiredKeys(sql, { batchSize: reaper.batchSize })
        log.info({ task: REAP_TASK, deleted }, 'reaped expired idempotency keys')
      },
    },
    parsedCronItems: parseCronItems([{ task: REAP_TASK, match: reaper.schedule, identifier: REAP_TASK }]),
  })
}

function pinoLogger(log: Pino): Logger {
  return new Logger((scope) => (level, message, meta) => {
    const pinoLevel = level === 'warning' ? 'warn' : level === 'error' ? 'error' : level === 'info' ? 'info' : 'debug'
    log[pinoLevel]({ worker: scope, ...meta }, message)
  })
}
