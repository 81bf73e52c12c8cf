// The application as one function of its dependencies; src/server.ts starts it, the tests inject into it.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { idempotencyTiming, loadConfig, trustProxyOption, type Config } from './config.js'
import type { Sql } from './db/connect.js'
import { loggerOptions, requestIdOptions } from './logger.js'
import { watchPool } from './observability/metrics.js'
import type { PaymentProcessor } from './processor/processor.js'
import { recoveries, requireRecoveries } from './recovery/registry.js'
import auth from './plugins/auth.js'
import deadline from './plugins/deadline.js'
import drain from './plugins/drain.js'
import errorHandler, { clientErrorHandler, frameworkErrors } from './plugins/error-handler.js'
import httpEdge from './plugins/http-edge.js'
import idempotency from './plugins/idempotency.js'
import metrics from './plugins/metrics.js'
import rateLimit from './plugins/rate-limit.js'
import responseHeaders from './plugins/response-headers.js'
import chargeRoutes from './routes/charges.js'
import healthRoutes, { type NotReady } from './routes/health.js'
import openapiRoutes from './routes/openapi.js'
import { collectDocumentedRoutes } from './openapi/document.js'
import eventRoutes from './routes/events.js'
import refundRoutes from './routes/refunds.js'
import balanceRoutes from './routes/balance.js'
import payoutRoutes from './routes/payouts.js'
import webhookEndpointRoutes from './routes/webhook-endpoints.js'
import processorWebhookRoutes from './routes/processor-webhooks.js'
import simulatedProcessorRoutes from './routes/simulated-processor.js'
import { simulatedControlsOf } from './processor/simulated.js'
import { chargeSettingsOf } from './processor/pricing.js'
import { validatorCompiler } from './schemas/validator.js'

export interface AppOptions {
  sql: Sql
  processor: PaymentProcessor
  /** Settings from the environment; anything left out takes its documented default. */
  config?: Partial<Config>
  /** A pino logger; defaults to one at the configured level. */
  log?: FastifyBaseLogger
  /** Why the process is not ready apart from its database (src/routes/health.ts), e.g. its worker stopped. */
  notReady?: NotReady
  /** What time it is for the books (when funds become available); tests move it. The system clock by default. */
  clock?: () => Date
}

/** The server around the app: logging, request ids, body limit, and the HTTP timeouts. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const config: Config = { ...loadConfig({}), ...options.config }
  const app = Fastify({
    loggerInstance: options.log ?? pino(loggerOptions(config.LOG_LEVEL)),
    ...requestIdOptions,
    bodyLimit: 64 * 1024,
    // A path parameter up to one past the longest id the document admits (a processor's payout id, 255), so that
    // one too long is the schema's 400 naming it; Fastify's own limit (100) would answer 414 before validation.
    routerOptions: { maxParamLength: 256 },
    clientErrorHandler,
    frameworkErrors,
    trustProxy: trustProxyOption(config.TRUST_PROXY),
    // Slow or silent clients are cut off: headers, then the whole request, must arrive in time; idle
    // keep-alive sockets close. Node checks these every second rather than every 30.
    keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    requestTimeout: config.HTTP_BODY_TIMEOUT_MS,
    http: {
      requireHostHeader: false,
      headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: 1000,
    },
    schemaErrorFormatter: (errors, dataVar) =>
      new Error(errors.map((error) => `${dataVar}${error.instancePath} ${error.message}`).join('; ')),
  })
  const { sql, processor, notReady, clock } = options
  await app.register(appPlugin, { sql, processor, config, notReady, clock })
  return app
}

/** A process that serves no API (the worker role) answers its health checks only. */
export async function buildHealthApp(options: {
  sql: Sql
  config?: Partial<Config>
  log?: FastifyBaseLogger
  notReady?: NotReady
}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: options.log ?? pino(loggerOptions('info')),
    ...requestIdOptions,
    clientErrorHandler,
    frameworkErrors,
  })
  await app.register(errorHandler)
  await app.register(responseHeaders, { hstsMaxAgeSeconds: options.config?.HSTS_MAX_AGE_SECONDS })
  await app.register(healthRoutes, { sql: options.sql, notReady: options.notReady })
  return app
}

/** Every route, hook and plugin of the API, as one plugin. */
export async function appPlugin(
  app: FastifyInstance,
  options: {
    sql: Sql
    processor: PaymentProcessor
    config: Config
    notReady?: NotReady | undefined
    clock?: (() => Date) | undefined
  },
) {
  const { sql, processor, config } = options
  app.setValidatorCompiler(validatorCompiler)
  // Before any route: each route's entry of openapi.yaml, collected as it is added.
  const documented = collectDocumentedRoutes(app)

  watchPool(sql)
  await app.register(errorHandler)
  await app.register(metrics)
  await app.register(responseHeaders, { hstsMaxAgeSeconds: config.HSTS_MAX_AGE_SECONDS })
  await app.register(httpEdge)
  await app.register(drain)
  await app.register(auth, {
    sql,
    cacheSeconds: config.AUTH_CACHE_SECONDS,
    beforeRefusing: (request) => app.refuseThrottledAddress(request),
  })
  await app.register(rateLimit, {
    maxPerAccount: config.RATE_LIMIT_MAX,
    maxAuthFailuresPerAddress: config.AUTH_FAILURE_LIMIT,
    windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS,
  })
  const chargeSettings = chargeSettingsOf(config)
  await app.register(idempotency, {
    sql,
    timing: idempotencyTiming(config),
    replayCacheSize: config.IDEMPOTENCY_REPLAY_CACHE_SIZE,
    statementStallMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    downstreamKeyRetentionSeconds: processor.keyRetentionSeconds,
  })
  await app.register(deadline, { timeoutMs: config.REQUEST_TIMEOUT_MS })

  await app.register(healthRoutes, { sql, notReady: options.notReady })
  const clock = options.clock ?? (() => new Date())
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', v1.authenticate)
      v1.addHook('onRequest', v1.countAccountRequest)
      await v1.register(chargeRoutes, { sql, processor, settings: chargeSettings })
      await v1.register(refundRoutes, { sql, processor })
      await v1.register(balanceRoutes, { sql, clock })
      await v1.register(payoutRoutes, { sql })
      await v1.register(eventRoutes, { sql })
      await v1.register(webhookEndpointRoutes, { sql, allowPrivateUrls: config.WEBHOOK_ALLOW_PRIVATE_URLS ?? false })
    },
    { prefix: '/v1' },
  )
  await app.register(processorWebhookRoutes, { sql, later: processor.later, settings: chargeSettings })
  const controls = simulatedControlsOf(processor)
  if (controls) await app.register(simulatedProcessorRoutes, { sql, controls, settings: chargeSettings })
  // Last: the document is built from every route above.
  await app.register(openapiRoutes, { routes: documented })
  requireRecoveries(
    documented.map((route) => ({ method: route.method, url: route.url, recovery: route.idempotency?.recovery })),
    recoveries(processor, sql, chargeSettings),
  )
}
