// Headers every response carries: the request id to quote in a support ticket, no caching of API responses
// (they hold payment data), no MIME sniffing, and HSTS when the service is reached over TLS.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

export default fp(
  async function responseHeaders(app: FastifyInstance, options: { hstsMaxAgeSeconds?: number | undefined }) {
    const hsts = options.hstsMaxAgeSeconds === undefined ? undefined : `max-age=${options.hstsMaxAgeSeconds}`
    // Set as the request arrives (a route may still override them); a callback hook, cheaper than an async one.
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('x-request-id', request.id)
      reply.header('x-content-type-options', 'nosniff')
      reply.header('cache-control', 'no-store')
      if (hsts) reply.header('strict-transport-security', hsts)
      done()
    })
  },
  { name: 'response-headers' },
)
