// Reads and validates the environment once, at start-up: a bad value stops the process with a clear message.
import { Type, type Static } from 'typebox'
import { Value } from 'typebox/value'

const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  /** Unset: an embedded PostgreSQL is started under DATA_DIR. */
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATA_DIR: Type.String({ minLength: 1, default: '.data' }),
  EMBEDDED_PG_PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 54329 }),
  /** How long a completed response is replayed for; after that the key names a new request. */
  IDEMPOTENCY_TTL_SECONDS: Type.Integer({ minimum: 1, default: 86_400 }),
  /** How long a claim may stay in flight before another request may take it over (the holder is presumed dead). */
  IDEMPOTENCY_LEASE_SECONDS: Type.Integer({ minimum: 1, default: 30 }),
  /** Rows the reaper deletes per statement; small batches keep locks and WAL bursts short. */
  REAPER_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 100_000, default: 1000 }),
  /** How long shutdown waits for requests in flight before the process exits anyway. */
  SHUTDOWN_GRACE_SECONDS: Type.Integer({ minimum: 1, default: 25 }),
  /** Cron schedule (graphile-worker crontab syntax) of the expired-key reaper. */
  REAPER_SCHEDULE: Type.String({ minLength: 9, default: '*/5 * * * *' }),
})

export type Config = Static<typeof ConfigSchema>

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw = Object.fromEntries(
    Object.keys(ConfigSchema.properties).flatMap((name) => {
      const value = env[name]
      return value === undefined || value === '' ? [] : [[name, value]]
    }),
  )
  const config = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, raw))
  if (!Value.Check(ConfigSchema, config)) {
    const problems = [...Value.Errors(ConfigSchema, config)].map((error) => `${error.instancePath.slice(1)} ${error.message}`)
    throw new Error(`invalid configuration: ${problems.join('; ')}`)
  }
  return config
}
