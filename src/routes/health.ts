// Liveness (the process answers) and readiness (the database answers, within READINESS_TIMEOUT_MS, and whatever
// else the process says it needs: its worker running), for orchestrators and load balancers. A frozen database
// makes readiness fail fast instead of hanging the probe.
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Sql } from '../db/connect.js'
import { withTimeout } from '../db/errors.js'
import { genericProblem, PROBLEM_CONTENT_TYPE } from '../problems.js'

export const READINESS_TIMEOUT_MS = 1500

const Healthy = Type.Object({ status: Type.Literal('ok') })

/**
 * Why the process is not ready apart from its database (its worker stopped, or cannot write), or undefined when it is.
 */
export type NotReady = () => string | undefined | Promise<string | undefined>

export default async function healthRoutes(app: FastifyInstance, options: { sql: Sql; notReady?: NotReady }) {
  const ok = { description: 'Healthy.', schema: Healthy }
  const liveness = {
    operationId: 'liveness',
    tag: 'Service' as const,
    summary: 'Liveness: the process answers',
    public: true,
    responses: { 200: ok },
  }
  app.get('/healthz', { config: { openapi: liveness } }, async () => ({ status: 'ok' }))

  const readiness = {
    operationId: 'readiness',
    tag: 'Service' as const,
    summary: 'Readiness: a writable primary answers, and the worker runs',
    public: true,
    responses: { 200: ok },
    problems: ['service-unavailable' as const],
  }
  app.get('/readyz', { config: { openapi: readiness } }, async (request, reply) => {
    const notReady = (reason: string) =>
      reply.code(503).header('retry-after', '2').type(PROBLEM_CONTENT_TYPE).send(genericProblem(503, reason))
    try {
      const reason = await withTimeout(
        Promise.resolve(options.notReady?.()),
        READINESS_TIMEOUT_MS,
        'the readiness check',
      )
      if (reason) return notReady(reason)
      const [row] = await withTimeout(
        options.sql`show transaction_read_only`.execute(),
        READINESS_TIMEOUT_MS,
        'the readiness query',
      )
      // A standby, or a primary being demoted: it answers, but every write would fail.
      if (row?.transaction_read_only !== 'off')
        return notReady('The database is read-only: no writable primary is reachable.')
      return { status: 'ok' }
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check: database unreachable')
      return notReady('The database is not reachable.')
    }
  })
}
