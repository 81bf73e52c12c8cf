// One error handler for the whole app: every error leaves as application/problem+json, and no 5xx echoes its cause.
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { isConcurrentUpdate, isDatabaseUnavailable } from '../db/errors.js'
import { genericProblem, Problem, PROBLEM_CONTENT_TYPE, problemBody, type ProblemBody } from '../problems.js'
import { RETRY_AFTER_SECONDS } from './deadline.js'

export default fp(
  async function errorHandler(app: FastifyInstance) {
    app.setErrorHandler((error: FastifyError | Problem, request, reply) => {
      if (error instanceof Problem) {
        return reply.code(error.status).headers(error.headers).type(PROBLEM_CONTENT_TYPE).send(error.body)
      }
      const body = clientErrorBody(error, request.headers['content-type'])
      if (body) return reply.code(body.status).type(PROBLEM_CONTENT_TYPE).send(body)

      // The transaction rolled back; the client may retry (with the same key, if it sent one).
      const retryable = (type: 'concurrent-update' | 'service-unavailable', retryAfter: string, detail: string) =>
        reply.code(503).header('retry-after', retryAfter).type(PROBLEM_CONTENT_TYPE).send(problemBody(type, detail))
      if (isConcurrentUpdate(error)) {
        request.log.warn({ err: error }, 'transaction lost a race with another one')
        return retryable(
          'concurrent-update',
          '1',
          'Another request was changing the same data at the same moment; nothing was recorded. Retry it (with the ' +
            'same Idempotency-Key, if it had one).',
        )
      }
      if (isDatabaseUnavailable(error)) {
        request.log.warn({ err: error }, 'database unavailable')
        return retryable(
          'service-unavailable',
          RETRY_AFTER_SECONDS,
          'The database is unavailable; nothing was recorded. Retry it (with the same Idempotency-Key, if it had ' +
            'one) once the database is back.',
        )
      }
      request.log.error({ err: error }, 'request failed')
      return reply
        .code(500)
        .type(PROBLEM_CONTENT_TYPE)
        .send(genericProblem(500, 'An unexpected error occurred; the request can be retried.'))
    })

    // A path that exists with other methods is a 405 with Allow (RFC 9110 section 15.5.6), not a 404.
    const routes: { path: RegExp; method: string }[] = []
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) routes.push({ path: pathPattern(route.url), method })
    })
    const noRoute = (request: FastifyRequest, reply: FastifyReply) => {
      const [path = ''] = request.url.split('?')
      const allowed = [...new Set(routes.filter((route) => route.path.test(path)).map((route) => route.method))]
      if (allowed.length) {
        return reply
          .code(405)
          .header('allow', allowed.join(', '))
          .type(PROBLEM_CONTENT_TYPE)
          .send(genericProblem(405, `${path} does not take ${request.method}; it takes ${allowed.join(', ')}.`))
      }
      return reply
        .code(404)
        .type(PROBLEM_CONTENT_TYPE)
        .send(genericProblem(404, `No route for ${request.method} ${path}`))
    }
    // Answered before the body is parsed (and after every onRequest hook): a method no route takes (QUERY, say)
    // is refused for what it is, not for its body's content type.
    app.addHook('preParsing', async (request, reply) => {
      if (request.is404) return noRoute(request, reply)
    })
    app.setNotFoundHandler(noRoute)
  },
  { name: 'error-handler' },
)

/** A route's URL as a pattern of concrete paths: each :param is one path segment. */
function pathPattern(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/')
  return new RegExp(`^${source}/?$`)
}

/** Schema validation and Fastify's own 4xx (bad JSON, wrong content type, body too large) are the client's to fix. */
function clientErrorBody(error: FastifyError, contentType: string | undefined): ProblemBody | undefined {
  if (error.validation) {
    return problemBody('validation-failed', error.message, {
      errors: error.validation.map((issue) => ({
        location: `${error.validationContext ?? 'body'}${issue.instancePath}`,
        message: issue.message ?? 'is not valid',
      })),
    })
  }
  const status = error.statusCode ?? 500
  if (status === 415 && error.code?.startsWith('FST_ERR_CTP')) {
    const sent = contentType === undefined ? 'none' : JSON.stringify(contentType.slice(0, 100))
    return genericProblem(
      415,
      `The body must be JSON: send Content-Type: application/json (this request sent ${sent}).`,
    )
  }
  if (status >= 400 && status < 500) return genericProblem(status, error.message)
  return undefined
}

/** Fastify's own rejections before routing: a URL whose percent-encoding does not decode is the client's to fix. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 400
  const detail =
    error.code === 'FST_ERR_BAD_URL' ? 'The URL is not validly percent-encoded UTF-8.' : 'The request URL is not valid.'
  void reply.code(status).type(PROBLEM_CONTENT_TYPE).send(genericProblem(status, detail))
}

/** Requests Node's HTTP parser rejects (bad header bytes, oversized headers) never reach Fastify's handler. */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy()
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400
  const body = JSON.stringify(genericProblem(status, 'The request could not be parsed as HTTP.'))
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
}
