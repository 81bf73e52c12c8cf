// Liveness (the process answers) and readiness (the database answers), for orchestrators and load balancers.
import type { FastifyInstance } from 'fastify'
import type { Sql } from '../db/connect.js'
import { genericProblem, PROBLEM_CONTENT_TYPE } from '../problems.js'

export default async function healthRoutes(app: FastifyInstance, options: { sql: Sql }) {
  app.get('/healthz', async () => ({ status: 'ok' }))

  app.get('/readyz', async (request, reply) => {
    try {
      await options.sql`select 1`
      return { status: 'ok' }
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check: database unreachable')
      return reply.code(503).type(PROBLEM_CONTENT_TYPE).send(genericProblem(503, 'The database is not reachable.'))
    }
  })
}
