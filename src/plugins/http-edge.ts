// What Node and Fastify accept at the edge that a JSON payments API must not: a request without a Host header,
// a JSON body in another charset or in broken UTF-8, nested deeper than any request of this API is, or with a
// __proto__ key. Each is refused as problem+json before any route runs.
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { genericProblem, Problem, PROBLEM_CONTENT_TYPE } from '../problems.js'

const UTF8 = new TextDecoder('utf-8', { fatal: true })
// No body of this API nests more than a few levels. A limit keeps every walk over the parsed body (the schema
// validator, the NUL check, the fingerprint) far from the stack's end: 30,000 nested arrays overflowed it (500).
export const MAX_JSON_DEPTH = 32

// Fastify's JSON parser (secure-json-parse) refuses, anywhere in a body, a key that JavaScript would take for the
// object's prototype, and reports it as "not valid JSON". When the text does parse as JSON, that refusal is what
// happened: it is this API's rule (openapi.yaml's Metadata says so), hence a validation-failed that names the key.
const PROTOTYPE_KEY_REFUSED =
  'The body has a key named __proto__ (or a constructor key holding a prototype); no object of this API may have one.'
function isJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

export default fp(
  async function httpEdge(app: FastifyInstance) {
    // RFC 9112 section 3.2: an HTTP/1.1 request without Host is a 400. Node's own 400 has an empty body, so the
    // server is built with requireHostHeader: false and the check is made here instead.
    app.addHook('onRequest', (request, reply, done) => {
      if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
        return reply
          .code(400)
          .type(PROBLEM_CONTENT_TYPE)
          .send(genericProblem(400, 'HTTP/1.1 requests must carry a Host header.'))
      }
      done()
    })

    // A JSON API: anything but JSON is 415, rather than text that then fails validation.
    app.removeAllContentTypeParsers()
    const parseJson = app.getDefaultJsonParser('error', 'error')
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase()
      if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
        const detail = `JSON bodies must be UTF-8; the charset ${charset.slice(0, 40)} is not supported.`
        return done(Object.assign(new Error(detail), { statusCode: 415 }), undefined)
      }
      // An empty body is no body: a POST that needs one is told "body must be object" (400 validation-failed),
      // one that takes none (src/routes/optional-body.ts) treats it as {}.
      if ((body as Buffer).length === 0) return done(null, undefined)
      let text: string
      try {
        text = UTF8.decode(body as Buffer)
      } catch {
        return done(new Problem('validation-failed', 'The body is not valid UTF-8.'), undefined)
      }
      if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
        return done(
          new Problem(
            'validation-failed',
            `The body nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects.`,
          ),
          undefined,
        )
      }
      // A callback parser: what it parsed comes through `done`, never through a promise.
      void parseJson(request, text, (error, parsed) =>
        done(error && isJson(text) ? new Problem('validation-failed', PROTOTYPE_KEY_REFUSED) : error, parsed),
      )
    })
  },
  { name: 'http-edge' },
)

/**
 * Whether JSON text opens more than `max` arrays and objects inside each other (strings skipped): one pass, no parse.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0
  let inString = false
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index)
    if (inString) {
      if (char === 0x5c)
        index++ // a backslash escapes the next character
      else if (char === 0x22) inString = false
    } else if (char === 0x22) inString = true
    else if (char === 0x5b || char === 0x7b) {
      if (++depth > max) return true
    } else if (char === 0x5d || char === 0x7d) depth--
  }
  return false
}
