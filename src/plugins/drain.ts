// Graceful drain: once app.close() starts, requests in flight finish and their connections close after the
// response. Without this an idle keep-alive socket would hold close() open until the client let go of it.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

export default fp(
  async function drain(app: FastifyInstance) {
    let closing = false
    app.addHook('preClose', async () => {
      closing = true
    })
    app.addHook('onSend', (_request, reply, payload, done) => {
      if (closing) reply.header('connection', 'close')
      done(null, payload)
    })
  },
  { name: 'drain' },
)
