// Request duration by route pattern, method and status, for every response (src/observability/metrics.ts).
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { httpRequestDuration, httpRequests } from '../observability/metrics.js'

export default fp(
  async function metrics(app: FastifyInstance) {
    app.addHook('onResponse', (request, reply, done) => {
      const labels = {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: String(reply.statusCode),
      }
      httpRequests.inc(labels)
      httpRequestDuration.observe(labels, reply.elapsedTime / 1000)
      done()
    })
  },
  { name: 'metrics' },
)
