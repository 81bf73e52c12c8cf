// Every request is answered within REQUEST_TIMEOUT_MS, even while the database hangs (a frozen server answers
// nothing, and no driver timeout fires): past the deadline the client gets a 503 it may retry with the same
// key. The work already under way is not torn down; it finishes or rolls back on its own, and the
// Idempotency-Key keeps a retry from doing it twice. `request.deadline.aborted` is set at that moment, so work that
// has not yet begun (a processor call) is not started for a client that has already been answered, and an
// idempotent request that fails after that is logged quietly (reply.idempotent, src/plugins/idempotency.ts).
// Fastify's own handlerTimeout (5.12) cannot do this: a client that closes its side after sending a POST body
// aborts it and disarms its timer (fastify/fastify#6725).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { genericProblem, PROBLEM_CONTENT_TYPE, problemBody } from '../problems.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** `aborted` once the request's deadline has passed and it has been answered with a 503 (or 408). */
    deadline: { readonly aborted: boolean }
  }
}

export const RETRY_AFTER_SECONDS = '2'

export default fp(
  async function deadline(app: FastifyInstance, options: { timeoutMs: number }) {
    app.decorateRequest('deadline', null as unknown as { aborted: boolean })

    // A callback hook, not an async one: it runs on every request, and a promise per request is measurable.
    app.addHook('onRequest', (request, reply, done) => {
      const deadline = { aborted: false }
      request.deadline = deadline
      const timer = setTimeout(() => {
        deadline.aborted = true
        if (!reply.sent) answerLate(request, reply, options.timeoutMs)
      }, options.timeoutMs)
      // 'close' comes when the response has gone, or the connection went first.
      reply.raw.once('close', () => clearTimeout(timer))
      done()
    })
  },
  { name: 'deadline' },
)

function answerLate(request: FastifyRequest, reply: FastifyReply, timeoutMs: number) {
  // Still reading the body: the client is slow, not us.
  if (!request.raw.complete) {
    request.log.info({ timeoutMs }, 'request body not received before the deadline')
    return reply
      .code(408)
      .header('connection', 'close')
      .type(PROBLEM_CONTENT_TYPE)
      .send(genericProblem(408, 'The request body did not arrive in time.'))
  }
  request.log.warn({ timeoutMs }, 'request not answered before its deadline; replying 503')
  return reply
    .code(503)
    .header('retry-after', RETRY_AFTER_SECONDS)
    .type(PROBLEM_CONTENT_TYPE)
    .send(
      problemBody(
        'service-unavailable',
        `The request could not be completed within ${timeoutMs} ms. Retry it with the same Idempotency-Key; it ` +
          `will not be done twice.`,
      ),
    )
}
