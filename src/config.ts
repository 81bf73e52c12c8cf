// Reads and validates the environment once, at start-up: a bad or self-contradicting value stops the process
// with one clear line (src/server.ts prints it), before anything listens or connects.
import { Type, type Static } from 'typebox'
import { Value } from 'typebox/value'
import { convertStrict, describeErrors } from './schemas/strict-convert.js'
import { urlParameter } from './db/hosts.js'
import { SUPPORTED_CURRENCIES } from './schemas/common.js'

const Seconds = (defaultValue: number, options: { minimum?: number; maximum?: number } = {}) =>
  Type.Integer({ minimum: 1, ...options, default: defaultValue })
const Milliseconds = (defaultValue: number, options: { minimum?: number; maximum?: number } = {}) =>
  Type.Integer({ minimum: 100, ...options, default: defaultValue })

/** An amount per currency: "jpy=0,eur=25" (or nothing). */
const CURRENCY_AMOUNTS = `^((${SUPPORTED_CURRENCIES.join('|')})=[0-9]{1,6}(,|$))*$`

const ConfigSchema = Type.Object({
  /** api: HTTP only; worker: background jobs only (and health endpoints); all: both, in one process. */
  ROLE: Type.Enum(['all', 'api', 'worker'], { default: 'all' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  /** Serve Prometheus metrics at GET /metrics on this port (on HOST); unset: no metrics listener. */
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  /** json for machines; pretty, one readable line per entry, for people; auto: pretty when stdout is a terminal. */
  LOG_FORMAT: Type.Enum(['auto', 'json', 'pretty'], { default: 'auto' }),
  /** Unset: an embedded PostgreSQL is started under DATA_DIR. */
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATA_DIR: Type.String({ minLength: 1, default: '.data' }),
  EMBEDDED_PG_PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 54329 }),
  /**
   * Apply pending migrations when a process opens the database (serialised by an advisory lock); else run `npm run
   * migrate`.
   */
  MIGRATE_ON_START: Type.Boolean({ default: true }),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  /**
   * DATABASE_URL goes through a pooler in transaction mode (PgBouncer's pool_mode = transaction): no prepared
   * statements, no session settings at connect (the timeouts must then be set on the role), see
   * docs/high-availability.md.
   */
  DATABASE_TRANSACTION_POOLING: Type.Boolean({ default: false }),
  /** How long opening a connection may take before the attempt fails (and the request gets a 503). */
  DATABASE_CONNECT_TIMEOUT_MS: Milliseconds(2000),
  /** PostgreSQL's statement_timeout for every statement of the service (migrations excepted). */
  DATABASE_STATEMENT_TIMEOUT_MS: Milliseconds(3000),
  /**
   * How long a starting process keeps trying while the database is unavailable (mid-failover, restarting) before
   * it gives up and exits 1. 0: it exits at the first failure.
   */
  DATABASE_START_WAIT_SECONDS: Type.Integer({ minimum: 0, maximum: 3600, default: 60 }),
  /**
   * How long start-up may take in all (the database, migrations, the worker, the listeners) before the process
   * gives up and exits 1: a statement on a connection gone quiet fails no other way.
   */
  STARTUP_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 7200, default: 180 }),
  /** How long a request may take in all before it is answered 503 (the work it started still ends cleanly). */
  REQUEST_TIMEOUT_MS: Milliseconds(4000, { maximum: 120_000 }),
  /** How long a client may take to send its headers, and its whole request. */
  HTTP_HEADERS_TIMEOUT_MS: Milliseconds(10_000),
  HTTP_BODY_TIMEOUT_MS: Milliseconds(20_000),
  /** How long an idle keep-alive connection stays open; set it above your load balancer's idle timeout. */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: Milliseconds(10_000),
  /** Trust X-Forwarded-For from: "true" (any proxy), a hop count, or a comma-separated list of addresses/CIDRs. */
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1 })),
  /** Set (e.g. 31536000) when clients reach the service over TLS: adds Strict-Transport-Security. */
  HSTS_MAX_AGE_SECONDS: Type.Optional(Type.Integer({ minimum: 0 })),
  /** The kind of API keys this deployment issues: sk_test_... or sk_live_... */
  API_KEY_MODE: Type.Enum(['test', 'live'], { default: 'test' }),
  /** How long a valid API key is remembered per instance: the bound on how long a revoked key still works. 0: never. */
  AUTH_CACHE_SECONDS: Type.Integer({ minimum: 0, maximum: 60, default: 5 }),
  /** Requests each account may make per window, on each instance. */
  RATE_LIMIT_MAX: Type.Integer({ minimum: 1, default: 6000 }),
  RATE_LIMIT_WINDOW_SECONDS: Seconds(60),
  /** Failed authentications one client address may make per window before it gets 429s. */
  AUTH_FAILURE_LIMIT: Type.Integer({ minimum: 1, default: 20 }),
  /** How long a completed response is replayed for; after that the key names a new request. */
  IDEMPOTENCY_TTL_SECONDS: Seconds(86_400),
  /**
   * Completed keys each instance remembers once they have been replayed, so that repeated replays skip the database. 0:
   * none.
   */
  IDEMPOTENCY_REPLAY_CACHE_SIZE: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 10_000 }),
  /** How long a claim may stay in flight before another request may take it over (the holder is presumed dead). */
  IDEMPOTENCY_LEASE_SECONDS: Seconds(30),
  /** Rows the reaper deletes per statement; small batches keep locks and WAL bursts short. */
  REAPER_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 100_000, default: 1000 }),
  /**
   * When the recovery worker looks for abandoned claims (it is also woken when a request ends its lease after the
   * processor call).
   */
  RECOVERY_SCHEDULE: Type.String({ minLength: 9, default: '* * * * *' }),
  /**
   * How long after its lease ended an abandoned claim is left to its client's own retry before the worker settles
   * it. Longer than PROCESSOR_TIMEOUT_MS: only then is "the processor never saw it" final when the worker asks.
   */
  RECOVERY_GRACE_SECONDS: Type.Integer({ minimum: 1, default: 60 }),
  /** How long a processor call may take before it is given up as an unknown outcome (503; settled later). */
  PROCESSOR_TIMEOUT_MS: Milliseconds(10_000, { maximum: 600_000 }),
  RECOVERY_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 10_000, default: 100 }),
  /**
   * A worker pool that has not said it is alive for this long while it holds jobs is presumed dead (SIGKILLed, its
   * host gone): its jobs and queues are unlocked for the live workers. Shorter: a crash stalls less; a worker
   * stopped for longer than this (SIGSTOP, a long GC pause) may see its job run again elsewhere (which is safe).
   */
  WORKER_DEAD_AFTER_SECONDS: Type.Integer({ minimum: 3, maximum: 3600, default: 30 }),
  /** How long past due an abandoned claim may be before /readyz, the log and a metric say settlement is behind. */
  SETTLEMENT_BEHIND_SECONDS: Type.Integer({ minimum: 10, default: 180 }),
  /** Webhook deliveries a worker process sends at once (recovery, expiry and the reapers have 3 slots of their own). */
  WORKER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  /** How long a webhook delivery may take before it counts as failed and is retried. */
  WEBHOOK_TIMEOUT_MS: Milliseconds(15_000, { maximum: 60_000 }),
  /** Seconds to wait after each failed delivery attempt (decimals allowed); after the last, the delivery fails. */
  WEBHOOK_RETRY_SCHEDULE: Type.String({
    pattern: '^[0-9]+(\\.[0-9]+)?(,[0-9]+(\\.[0-9]+)?){0,19}$',
    default: '5,300,1800,7200,18000,36000,50400,72000,86400',
  }),
  /**
   * Allow http:// and private, loopback and link-local webhook URLs (development and tests). Unset: allowed where the
   * database is the embedded one (no DATABASE_URL: a developer's machine), refused everywhere else (src/server.ts).
   */
  WEBHOOK_ALLOW_PRIVATE_URLS: Type.Optional(Type.Boolean()),
  /** How long an authorization (capture: false) may wait for its capture before it is voided and expires. */
  AUTHORIZATION_EXPIRES_DAYS: Type.Integer({ minimum: 1, maximum: 30, default: 7 }),
  /**
   * The processor's price for a payment, in hundredths of a percent (290: 2.9%), and a fixed part in the currency's
   * minor unit: what the books post as its fee when the processor did not say its own (src/processor/pricing.ts). The
   * simulated processor charges exactly this.
   */
  FEE_PERCENT_BASIS_POINTS: Type.Integer({ minimum: 0, maximum: 10_000, default: 290 }),
  FEE_FIXED_CENTS: Type.Integer({ minimum: 0, maximum: 10_000, default: 30 }),
  /** The processor's fee for a dispute, withdrawn with its amount. */
  DISPUTE_FEE_CENTS: Type.Integer({ minimum: 0, maximum: 100_000, default: 1500 }),
  /**
   * The two fixed amounts above are in cents, for a currency with cents; a currency without (jpy) has them in whole
   * units, rounded (30 cents: ¥0; 1500: ¥15). Where an account's pricing differs per currency, these say so, each in
   * the currency's own minor unit: "jpy=0,eur=25" (src/processor/pricing.ts).
   */
  FEE_FIXED_BY_CURRENCY: Type.String({ pattern: CURRENCY_AMOUNTS, default: '' }),
  DISPUTE_FEE_BY_CURRENCY: Type.String({ pattern: CURRENCY_AMOUNTS, default: '' }),
  /** How many days after a payment its net becomes available to pay out. */
  FUNDS_AVAILABLE_AFTER_DAYS: Type.Integer({ minimum: 0, maximum: 90, default: 2 }),
  /** How long events (and their deliveries) are kept. */
  EVENT_RETENTION_DAYS: Type.Integer({ minimum: 1, default: 30 }),
  /** How long shutdown waits for requests in flight before the process exits anyway. */
  SHUTDOWN_GRACE_SECONDS: Seconds(25),
  /**
   * Cron schedule (graphile-worker crontab syntax) of the expired-key reaper; each run reaps, paced, for up to 50 s.
   */
  REAPER_SCHEDULE: Type.String({ minLength: 9, default: '* * * * *' }),
  /** Who moves the money: the simulated processor (test cards, its ledger in the service's database), or Stripe. */
  PROCESSOR: Type.Enum(['simulated', 'stripe'], { default: 'simulated' }),
  /** With PROCESSOR=stripe: the secret (or restricted) key, sk_test_... or, with API_KEY_MODE=live, sk_live_... */
  STRIPE_SECRET_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** With PROCESSOR=stripe: Stripe's API, or a Stripe-compatible server (plain http only on a loopback address). */
  STRIPE_API_URL: Type.String({ pattern: '^https?://', default: 'https://api.stripe.com' }),
  /**
   * With PROCESSOR=stripe: the signing secret (whsec_...) of the webhook endpoint Stripe sends to (POST
   * /processor/webhooks).
   */
  STRIPE_WEBHOOK_SECRET: Type.Optional(Type.String({ pattern: '^whsec_' })),
  /**
   * With PROCESSOR=stripe and accounts linked to connected accounts (Stripe Connect): the signing secret of the
   * Connect webhook endpoint, which Stripe sends every connected account's events to (the same URL may serve both).
   */
  STRIPE_CONNECT_WEBHOOK_SECRET: Type.Optional(Type.String({ pattern: '^whsec_' })),
  /** How long the simulated processor's pm_card_slow takes. */
  SIMULATED_SLOW_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 2000 }),
  /**
   * Where a customer's browser reaches this service, for the simulated processor's authentication page; unset:
   * http://HOST:PORT.
   */
  SIMULATED_PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^/]+$' })),
  /**
   * When the processor's list of events is read for what its webhooks did not bring (and waiting events applied again).
   */
  RECONCILE_SCHEDULE: Type.String({ minLength: 9, default: '* * * * *' }),
  /** When the books are compared with the processor's payments and refunds; disagreements: npm run reconcile:report. */
  COMPARE_SCHEDULE: Type.String({ minLength: 9, default: '*/10 * * * *' }),
})

export type Config = Static<typeof ConfigSchema>

/** Every setting's name: docs/operations.md's table must give each (test/config.test.ts). */
export const SETTINGS = Object.keys(ConfigSchema.properties) as (keyof Config)[]

/** A configuration the process must not start with; its message is meant for the operator, as is. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw = Object.fromEntries(
    Object.keys(ConfigSchema.properties).flatMap((name) => {
      const value = env[name]?.trim()
      return value === undefined || value === '' ? [] : [[name, value]]
    }),
  )
  const config = Value.Default(ConfigSchema, convertStrict(ConfigSchema, raw))
  if (!Value.Check(ConfigSchema, config))
    throw new ConfigError(`invalid configuration: ${describeErrors(ConfigSchema, config).join('; ')}`)
  const contradictions = contradictionsIn(config)
  if (contradictions.length) throw new ConfigError(`invalid configuration: ${contradictions.join('; ')}`)
  return config
}

/** Settings that are each valid but cannot hold together. */
function contradictionsIn(config: Config): string[] {
  const found: string[] = []
  // Room to replay a response after every request that can hold the key and the recovery of its outcome. Not a
  // safety bound (an unsettled key never expires, src/idempotency/claims.ts), but a TTL shorter than this would
  // expire responses before a client could reasonably have retried.
  const minimumTtl = 2 * config.IDEMPOTENCY_LEASE_SECONDS + config.RECOVERY_GRACE_SECONDS + 60
  if (config.IDEMPOTENCY_TTL_SECONDS < minimumTtl) {
    found.push(
      `IDEMPOTENCY_TTL_SECONDS (${config.IDEMPOTENCY_TTL_SECONDS}) must be at least twice ` +
        `IDEMPOTENCY_LEASE_SECONDS plus RECOVERY_GRACE_SECONDS plus 60, here ${minimumTtl}`,
    )
  }
  // A request hands its operation to the processor only before its deadline, and that must come before its lease
  // can end: once the lease has ended (and a grace period passed) the recovery worker may conclude that the
  // processor never saw the operation and forget it, and a call still to come would then charge unrecorded.
  if (config.IDEMPOTENCY_LEASE_SECONDS * 1000 < config.REQUEST_TIMEOUT_MS) {
    found.push(
      `IDEMPOTENCY_LEASE_SECONDS (${config.IDEMPOTENCY_LEASE_SECONDS} s) must not be shorter than ` +
        `REQUEST_TIMEOUT_MS (${config.REQUEST_TIMEOUT_MS} ms)`,
    )
  }
  // The worker asks the processor what it did only once no call under the operation id can still reach it.
  if (config.RECOVERY_GRACE_SECONDS * 1000 <= config.PROCESSOR_TIMEOUT_MS) {
    found.push(
      `RECOVERY_GRACE_SECONDS (${config.RECOVERY_GRACE_SECONDS} s) must be longer than PROCESSOR_TIMEOUT_MS ` +
        `(${config.PROCESSOR_TIMEOUT_MS} ms)`,
    )
  }
  // A claim waits for the next scheduled recovery run (a minute at most by default) and, if the worker that had it
  // died, for that worker to be found dead: settlement is not behind before both had their time.
  if (config.SETTLEMENT_BEHIND_SECONDS <= config.WORKER_DEAD_AFTER_SECONDS + 60) {
    found.push(
      `SETTLEMENT_BEHIND_SECONDS (${config.SETTLEMENT_BEHIND_SECONDS}) must be longer than ` +
        `WORKER_DEAD_AFTER_SECONDS (${config.WORKER_DEAD_AFTER_SECONDS}) plus 60`,
    )
  }
  if (config.STARTUP_TIMEOUT_SECONDS <= config.DATABASE_START_WAIT_SECONDS) {
    found.push(
      `STARTUP_TIMEOUT_SECONDS (${config.STARTUP_TIMEOUT_SECONDS}) must be longer than DATABASE_START_WAIT_SECONDS ` +
        `(${config.DATABASE_START_WAIT_SECONDS})`,
    )
  }
  // libpq's prefer and allow fall back to an unencrypted connection; node-postgres (graphile-worker's driver) has no
  // fallback, so the same URL would connect the API and fail the worker, or the other way round.
  const sslmode = config.DATABASE_URL ? urlParameter(config.DATABASE_URL, 'sslmode') : undefined
  if (sslmode === 'prefer' || sslmode === 'allow') {
    found.push(
      `DATABASE_URL's sslmode=${sslmode} cannot be honoured by both database drivers: say sslmode=require ` +
        `(encrypted) or sslmode=disable` +
        ' (pg_autoctl show uri prints prefer for nodes made with --no-ssl: write disable there)',
    )
  }
  if (config.PROCESSOR === 'stripe') found.push(...stripeContradictions(config))
  if (config.HTTP_BODY_TIMEOUT_MS < config.HTTP_HEADERS_TIMEOUT_MS) {
    found.push('HTTP_BODY_TIMEOUT_MS covers the headers too, so it must not be shorter than HTTP_HEADERS_TIMEOUT_MS')
  }
  return found
}

/** The Stripe settings that cannot work, or would move money the operator did not mean to. */
function stripeContradictions(config: Config): string[] {
  const key = config.STRIPE_SECRET_KEY
  if (!key)
    return ['PROCESSOR=stripe needs STRIPE_SECRET_KEY (sk_test_... from the Stripe dashboard, Developers > API keys)']
  const mode = /^(?:sk|rk)_(test|live)_[0-9A-Za-z]{10,}$/.exec(key)?.[1]
  if (!mode) return [stripeKeyProblem(key)]
  const found: string[] = []
  if (mode === 'live' && config.API_KEY_MODE !== 'live')
    found.push(
      'STRIPE_SECRET_KEY is a live key, which moves real money: say so with API_KEY_MODE=live, or use an sk_test_ key',
    )
  if (mode === 'test' && config.API_KEY_MODE === 'live')
    found.push(
      'API_KEY_MODE=live with a test STRIPE_SECRET_KEY: live clients would be charged nothing; use an sk_live_ key',
    )
  const url = new URL(config.STRIPE_API_URL)
  if (url.protocol === 'http:' && !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
    found.push(
      `STRIPE_API_URL ${url.origin} would send the secret key unencrypted: use https, or http only on a loopback ` +
        `address`,
    )
  }
  return found
}

/** What is wrong with a STRIPE_SECRET_KEY that is not one, without echoing the key. */
function stripeKeyProblem(key: string): string {
  const prefix = /^(?:sk|rk)_(?:test|live)_/.exec(key)?.[0]
  if (!prefix) {
    const publishable = key.startsWith('pk_') ? ': that is a publishable key; the secret one is beside it' : ''
    return (
      `STRIPE_SECRET_KEY must begin sk_test_ (or rk_test_ for a restricted key, sk_live_ for a live one); it begins ` +
      `${JSON.stringify(key.slice(0, 3))}${publishable} (Dashboard > Developers > API keys)`
    )
  }
  const rest = key.slice(prefix.length)
  const wrong = /[^0-9A-Za-z]/.exec(rest)
  if (wrong)
    return (
      `STRIPE_SECRET_KEY has ${JSON.stringify(wrong[0])} after ${prefix}, where a Stripe key has only letters and ` +
      `digits: copy it again from the dashboard`
    )
  return (
    `STRIPE_SECRET_KEY is cut short: ${prefix} is followed by ${rest.length} characters, and a Stripe key has ` +
    `dozens; copy it whole from the dashboard`
  )
}

/** Fastify's trustProxy from TRUST_PROXY: true, a hop count, or a list of addresses. */
export function trustProxyOption(
  value: string | undefined,
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (value === undefined || value === 'false') return false
  if (value === 'true') return true
  if (/^[0-9]+$/.test(value)) return (_address, hop) => hop < Number(value)
  return value.split(',').map((entry) => entry.trim())
}

/** WEBHOOK_RETRY_SCHEDULE as milliseconds. */
export function retryScheduleMs(schedule: string): number[] {
  return schedule.split(',').map((seconds) => Math.round(Number(seconds) * 1000))
}

/** The idempotency keys' timing (src/idempotency/store.ts Timing), for the API's requests and the worker's tasks. */
export function idempotencyTiming(config: Config): {
  ttlSeconds: number
  leaseSeconds: number
  recoveryGraceSeconds: number
} {
  return {
    ttlSeconds: config.IDEMPOTENCY_TTL_SECONDS,
    leaseSeconds: config.IDEMPOTENCY_LEASE_SECONDS,
    recoveryGraceSeconds: config.RECOVERY_GRACE_SECONDS,
  }
}
