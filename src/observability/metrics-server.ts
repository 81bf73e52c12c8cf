// GET /metrics on a port of its own (METRICS_PORT), so that API clients never reach it and operators can keep it
// on an internal network.
import Fastify, { type FastifyInstance } from 'fastify'
import { registry } from './metrics.js'

export async function startMetricsServer(port: number, host: string): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  app.get('/metrics', async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()))
  await app.listen({ port, host })
  return app
}
