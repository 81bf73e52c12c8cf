// Starts the service in its ROLE: database (embedded unless DATABASE_URL is set), then the API over HTTP, the
// worker (graphile-worker jobs), or both (`all`, the default: one process does everything).
// On SIGTERM or SIGINT it stops taking requests, lets those in flight finish, then stops the worker and the
// database. Each step is bounded, so a dead database cannot keep the process from exiting.
import { pino } from 'pino'
import { buildApp, buildHealthApp } from './app.js'
import { linkedProcessorAccounts } from './accounts/api-keys.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { openDatabase } from './db/database.js'
import { whileDatabaseUnavailable } from './db/start-up.js'
import { logDestination, loggerOptions } from './logger.js'
import { startMetricsServer } from './observability/metrics-server.js'
import { createProcessor } from './processor/create.js'
import { startWorker, workerOptions } from './worker/worker.js'

const config = loadConfigOrExit()
const log = pino(loggerOptions(config.LOG_LEVEL), logDestination(config.LOG_FORMAT))
let stopping = false

function loadConfigOrExit(): Config {
  try {
    return loadConfig()
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    // One line an operator can act on, on stderr and in the log format, then exit 1.
    pino(loggerOptions('info'), pino.destination(2)).fatal(error.message)
    process.exit(1)
  }
}

// What start-up is doing now, for the line that says where it hung.
let startUpStep = 'loading'

async function start() {
  const database = await duringStartUp('opening the database', () =>
    openDatabase(config, {
      onLog: (line) => log.debug({ component: 'embedded-postgres' }, line),
      onNotice: (message) => log.info({ component: 'embedded-postgres' }, message),
    }),
  )
  log.info(
    { database: database.description, migrations_applied: database.migrationsApplied },
    `database: ${database.description}`,
  )
  // On a developer's machine (the embedded database) webhook endpoints may be local, as the README's receiver is;
  // a deployment (DATABASE_URL) refuses them unless it says otherwise.
  const settings: Config = {
    ...config,
    WEBHOOK_ALLOW_PRIVATE_URLS: config.WEBHOOK_ALLOW_PRIVATE_URLS ?? database.embedded,
  }
  if (settings.WEBHOOK_ALLOW_PRIVATE_URLS) {
    log.info(
      'webhook endpoints may be http:// and on this machine or a private network (WEBHOOK_ALLOW_PRIVATE_URLS, on ' +
        'by default with the embedded database)',
    )
  }
  // Only Stripe has connected accounts: on another processor a linked account's charges would be recorded on a
  // connected account none of its events name, and never move on. Said once, at start-up, rather than found later.
  const linked =
    config.PROCESSOR === 'stripe'
      ? []
      : await duringStartUp('reading the links to connected accounts', () => linkedProcessorAccounts(database.sql))
  if (linked.length > 0) {
    await database.close()
    throw new ConfigError(
      `PROCESSOR is ${config.PROCESSOR}, but ${linked.length} account(s) are linked to Stripe connected accounts ` +
        `(${linked.slice(0, 3).join(', ')}): run with PROCESSOR=stripe, or unlink them with npm run account:link ` +
        '-- --account ACCOUNT --unlink',
    )
  }
  const processor = createProcessor(config, database.sql, log)
  log.info(
    { processor: config.PROCESSOR },
    config.PROCESSOR === 'stripe'
      ? `processor: Stripe at ${config.STRIPE_API_URL}`
      : 'processor: simulated (test cards: docs/charges.md)',
  )
  if (config.PROCESSOR === 'stripe' && !config.STRIPE_WEBHOOK_SECRET) {
    log.warn(
      "STRIPE_WEBHOOK_SECRET is not set: Stripe's webhooks are refused, and outcomes that come later arrive only " +
        'through the reconciliation (docs/later-outcomes.md)',
    )
  }
  const serveApi = config.ROLE !== 'worker'
  // Set once the worker has stopped by itself: /readyz says so until the process, which exits, is replaced.
  let workerStopped: string | undefined
  // The worker runs on node-postgres pools of its own: after a failover they must have found the new primary too.
  const notReady = async () =>
    workerStopped ??
    (worker && !(await worker.writable().catch(() => false))
      ? 'The background worker cannot reach a writable primary.'
      : worker?.notReady())
  // A worker still answers /healthz and /readyz, for orchestrators.
  const app = serveApi
    ? await buildApp({ sql: database.sql, processor, config: settings, log, notReady })
    : await buildHealthApp({ sql: database.sql, config, log, notReady })
  const worker =
    config.ROLE === 'api'
      ? undefined
      : await duringStartUp('starting the worker', () => startWorker(workerOptions(settings, database, processor, log)))
  // No process keeps running with its worker stopped (a graphile-worker that shut itself down, say on another
  // schema's breaking-migration notice, or whose runner failed): webhooks, recovery and expiry would stop while
  // the API looked healthy. It says why, and exits 1 so that its supervisor starts a new one.
  worker?.promise.then(
    () => stoppedByItself(undefined),
    (error: unknown) => stoppedByItself(error),
  )
  function stoppedByItself(error: unknown) {
    if (stopping) return
    workerStopped = 'The background worker is not running; this process is exiting.'
    log.fatal(
      { err: error },
      'the background worker stopped by itself; exiting with status 1 so that the process is restarted',
    )
    void shutdown('worker stopped', 1)
  }
  // A port that cannot be had stops what started (the embedded PostgreSQL included) before the process exits.
  const listening = <T>(listen: Promise<T>, setting: string, port: number): Promise<T> =>
    listen.catch(async (error: NodeJS.ErrnoException) => {
      stopping = true
      await Promise.allSettled([app.close(), worker?.stop()])
      await database.close().catch(() => {})
      throw error.code === 'EADDRINUSE'
        ? new ConfigError(
            `port ${port} on ${config.HOST} is taken (another server?): stop it, or start with ${setting}=<another ` +
              `port>`,
          )
        : error
    })
  startUpStep = 'listening'
  const address = await listening(app.listen({ port: config.PORT, host: config.HOST }), 'PORT', config.PORT)
  const metricsServer =
    config.METRICS_PORT === undefined
      ? undefined
      : await listening(startMetricsServer(config.METRICS_PORT, config.HOST), 'METRICS_PORT', config.METRICS_PORT)
  if (metricsServer) log.info({ url: `${listeningAt(metricsServer)}/metrics` }, 'metrics served')
  log.info(
    { role: config.ROLE, url: address },
    serveApi
      ? `ready (${config.ROLE}): ${address}; get an API key with: npm run --silent account:create -- --name "Acme"`
      : `ready (worker): running background jobs; health at ${address}/readyz`,
  )

  /** Resolves true when every step stopped cleanly. */
  return async function stop(): Promise<boolean> {
    // Each step gets a third of the grace period, so that a hung one still leaves time for the rest.
    const stepMs = Math.min(10_000, (config.SHUTDOWN_GRACE_SECONDS * 1000) / 3)
    const clean = [await step('http server', () => app.close(), stepMs)]
    if (metricsServer) clean.push(await step('metrics server', () => metricsServer.close(), stepMs))
    if (worker && !workerStopped) clean.push(await step('worker', () => worker.stop(), stepMs))
    clean.push(await step('database', () => database.close(), stepMs))
    return clean.every(Boolean)
  }
}

/** A start-up step, tried again while the database is unavailable, for up to DATABASE_START_WAIT_SECONDS. */
function duringStartUp<T>(what: string, attempt: () => Promise<T>): Promise<T> {
  startUpStep = what
  return whileDatabaseUnavailable(attempt, {
    waitMs: config.DATABASE_START_WAIT_SECONDS * 1000,
    onWait: (error, delayMs) =>
      log.warn(
        { err: error, delay_ms: delayMs },
        `${what}: the database is not available (${error instanceof Error ? error.message : String(error)}); ` +
          `trying again in ${delayMs} ms`,
      ),
  })
}

function listeningAt(server: { server: { address(): unknown } }): string {
  const { address, port } = server.server.address() as { address: string; port: number }
  return `http://${address}:${port}`
}

/** Runs one shutdown step; a step that fails or hangs is logged with its cause, and shutdown moves on. */
async function step(name: string, run: () => Promise<void>, timeoutMs?: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const hung = new Promise<'hung'>((resolve) => {
    if (timeoutMs) timer = setTimeout(() => resolve('hung'), timeoutMs)
  })
  try {
    if ((await Promise.race([run(), hung])) !== 'hung') return true
    log.error({ step: name, timeoutMs }, `shutdown: ${name} did not stop within ${timeoutMs} ms; moving on`)
  } catch (error) {
    log.error(
      { step: name, err: error },
      `shutdown: ${name} did not stop cleanly: ${error instanceof Error ? error.message : String(error)}`,
    )
  } finally {
    clearTimeout(timer)
  }
  return false
}

// Start-up is bounded as a whole: a statement whose connection went quiet (no answer, no reset) waits for ever,
// and a process neither ready nor gone would fail silently. It says where it hung and exits for its supervisor.
const startUpTimer = setTimeout(() => {
  log.fatal(
    { step: startUpStep },
    `start-up did not finish within ${config.STARTUP_TIMEOUT_SECONDS} s (at: ${startUpStep}); exiting with status ` +
      `1 so that the process is started again`,
  )
  process.exit(1)
}, config.STARTUP_TIMEOUT_SECONDS * 1000)

// Unset until start-up has finished: a worker that stops by itself during start-up ends the process at once.
let stop: (() => Promise<boolean>) | undefined
stop = await start()
  .finally(() => clearTimeout(startUpTimer))
  .catch((error: unknown) => {
    // A setting to change is said in one line; anything else comes with its stack, for whoever debugs it.
    log.fatal(
      error instanceof ConfigError ? {} : { err: error },
      `could not start: ${error instanceof Error ? error.message : String(error)}`,
    )
    process.exit(1)
  })

async function shutdown(signal: string, exitCode = 0) {
  if (stopping) return
  stopping = true
  log.info({ signal }, 'shutting down')
  setTimeout(() => {
    log.error(
      { graceSeconds: config.SHUTDOWN_GRACE_SECONDS },
      'shutdown did not finish within the grace period; exiting',
    )
    process.exit(1)
  }, config.SHUTDOWN_GRACE_SECONDS * 1000).unref()
  if (!stop) process.exit(exitCode || 1)
  if (await stop()) {
    log.info('stopped')
    process.exit(exitCode)
  }
  log.error('stopped, not cleanly (see above)')
  process.exit(1)
}
process.on('SIGTERM', () => void shutdown('SIGTERM'))
process.on('SIGINT', () => void shutdown('SIGINT'))
