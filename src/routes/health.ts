// Liveness (the process answers) and readiness (the database answers, within READINESS_TIMEOUT_MS, and whatever
// else the process says it needs: its worker running), for orchestrators and load balancers. A frozen database
// makes readiness fail fast instead of hanging the probe.
import type { FastifyInstance } from 'fastify'
import type { Sql } from '../db/connect.js'
import { withTimeout } from '../db/errors.js'
import { genericProblem, PROBLEM_CONTENT_TYPE } from '../problems.js'

export const READINESS_TIMEOUT_MS = 1500

/** Why the process is not ready apart from its database (its worker stopped, or cannot write), or undefined when it is. */
export type NotReady = () => string | undefined | Promise<string | undefined>

export default async function healthRoutes(app: FastifyInstance, options: { sql: Sql; notReady?: NotReady }) {
  app.get('/healthz', async () => ({ status: 'ok' }))

  app.get('/readyz', async (request, reply) => {
    const notReady = (reason: string) => reply.code(503).header('retry-after', '2').type(PROBLEM_CONTENT_TYPE).send(genericProblem(503, reason))
    try {
      const reason = await withTimeout(Promise.resolve(options.notReady?.()), READINESS_TIMEOUT_MS, 'the readiness check')
      if (reason) return notReady(reason)
      const [row] = await withTimeout(options.sql`show transaction_read_only`.execute(), READINESS_TIMEOUT_MS, 'the readiness query')
      // A standby, or a primary being demoted: it answers, but every write would fail.
      if (row?.transaction_read_only !== 'off') return notReady('The database is read-only: no writable primary is reachable.')
      return { status: 'ok' }
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check: database unreachable')
      return notReady('The database is not reachable.')
    }
  })
}
