// Liveness (the process answers) and readiness (the database answers, within READINESS_TIMEOUT_MS, and whatever
// else the process says it needs: its worker running), for orchestrators and load balancers. A frozen database
// makes readiness fail fast instead of hanging the probe.
import type { FastifyInstance } from 'fastify'
import type { Sql } from '../db/connect.js'
import { withTimeout } from '../db/errors.js'
import { genericProblem, PROBLEM_CONTENT_TYPE } from '../problems.js'

export const READINESS_TIMEOUT_MS = 1500

/** Why the process is not ready apart from its database (its worker stopped), or undefined when it is. */
export type NotReady = () => string | undefined

export default async function healthRoutes(app: FastifyInstance, options: { sql: Sql; notReady?: NotReady }) {
  app.get('/healthz', async () => ({ status: 'ok' }))

  app.get('/readyz', async (request, reply) => {
    const notReady = (reason: string) => reply.code(503).header('retry-after', '2').type(PROBLEM_CONTENT_TYPE).send(genericProblem(503, reason))
    const reason = options.notReady?.()
    if (reason) return notReady(reason)
    try {
      await withTimeout(options.sql`select 1`.execute(), READINESS_TIMEOUT_MS, 'the readiness query')
      return { status: 'ok' }
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check: database unreachable')
      return notReady('The database is not reachable.')
    }
  })
}
