// The application as one function of its dependencies; src/server.ts starts it, the tests inject into it.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox'
import type { PaymentProcessor } from './charges/processor.js'
import type { Sql } from './db/connect.js'
import type { Timing } from './idempotency/store.js'
import { loggerOptions, requestIdOptions } from './logger.js'
import auth from './plugins/auth.js'
import drain from './plugins/drain.js'
import errorHandler, { clientErrorHandler } from './plugins/error-handler.js'
import idempotency from './plugins/idempotency.js'
import chargeRoutes from './routes/charges.js'
import healthRoutes from './routes/health.js'
import openapiRoutes from './routes/openapi.js'
import refundRoutes from './routes/refunds.js'

export interface AppOptions {
  sql: Sql
  processor: PaymentProcessor
  idempotency: Timing
  /** A pino logger; defaults to one at info level. */
  log?: FastifyBaseLogger
}

/** The server around the app: logging, request ids, body limit. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: options.log ?? pino(loggerOptions('info')),
    ...requestIdOptions,
    bodyLimit: 64 * 1024,
    clientErrorHandler,
    schemaErrorFormatter: (errors, dataVar) => new Error(errors.map((error) => `${dataVar}${error.instancePath} ${error.message}`).join('; ')),
  })
  await app.register(appPlugin, options)
  return app
}

/** Every route, hook and plugin of the API, as one plugin. */
export async function appPlugin(app: FastifyInstance, options: AppOptions) {
  // TypeBox validates: strict types for bodies, conversion only for query and path strings.
  app.setValidatorCompiler(TypeBoxValidatorCompiler)
  // A JSON API: anything but JSON is 415, rather than text that then fails validation.
  app.removeContentTypeParser('text/plain')

  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })

  await app.register(errorHandler)
  await app.register(drain)
  await app.register(auth, { sql: options.sql })
  await app.register(idempotency, { sql: options.sql, timing: options.idempotency })
  await app.register(healthRoutes, { sql: options.sql })
  await app.register(openapiRoutes)
  await app.register(
    async (v1) => {
      v1.addHook('onRequest', v1.authenticate)
      await v1.register(chargeRoutes, { sql: options.sql, processor: options.processor })
      await v1.register(refundRoutes, { sql: options.sql, processor: options.processor })
    },
    { prefix: '/v1' },
  )
}
