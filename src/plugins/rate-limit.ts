// Rate limits, with @fastify/rate-limit's in-memory store (the limits hold per instance): each account may make
// RATE_LIMIT_MAX requests per window, and each client address AUTH_FAILURE_LIMIT failed authentications.
// Both run in onRequest, before the idempotency layer, so a 429 never touches or records a key.
//
// The address limit only ever refuses requests that fail authentication anyway: past the limit, a bad key gets
// 429 instead of 401, while a valid key from the same address is served. Many clients share one address (behind
// a NAT, or a proxy the service does not trust with TRUST_PROXY), and one of them guessing keys must not lock
// the others out. What the limit buys is a slower, noisier brute force (hopeless anyway against 192-bit keys)
// and a clear signal; a guess still costs one indexed lookup of the key's hash.
// Headers follow draft-ietf-httpapi-ratelimit-headers: RateLimit-Policy and RateLimit, and Retry-After on a 429.
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Problem } from '../problems.js'

export interface RateLimitSettings {
  maxPerAccount: number
  maxAuthFailuresPerAddress: number
  windowSeconds: number
}

declare module 'fastify' {
  interface FastifyInstance {
    /** For a request whose authentication failed: refuses it with 429 if its address failed too often. */
    refuseThrottledAddress(request: FastifyRequest): Promise<void>
    /** onRequest hook, after authentication: counts the request against its account. */
    countAccountRequest(request: FastifyRequest, reply: FastifyReply): Promise<void>
  }
}

export default fp(
  async function rateLimits(app: FastifyInstance, settings: RateLimitSettings) {
    await app.register(rateLimit, { global: false })
    const timeWindow = settings.windowSeconds * 1000
    const perAccount = app.createRateLimit({
      max: settings.maxPerAccount,
      timeWindow,
      keyGenerator: (request) => request.account.id,
    })
    const authFailures = app.createRateLimit({ max: settings.maxAuthFailuresPerAddress, timeWindow })
    // No address can be over its limit unless some authentication failed within the last window: until then the
    // per-address lookup is skipped, which is most of the time (the rate limits measured 0.02 ms per request).
    let lastAuthFailureAt = -Infinity

    app.decorate('refuseThrottledAddress', async function refuseThrottledAddress(request: FastifyRequest) {
      if (performance.now() - lastAuthFailureAt > timeWindow) return
      const status = await authFailures(request, { increment: false })
      if (!status.isAllowed && status.remaining === 0) {
        throw tooMany(
          'auth-failures',
          status,
          'Too many failed authentications from this address; wait before trying again.',
        )
      }
    })

    // Only failures count, and only failures are refused: a client with a valid key is never slowed by this limit,
    // whoever shares its address. A callback hook, not an async
    // one: it runs on every response, and a promise per response is measurable.
    app.addHook('onResponse', (request, reply, done) => {
      if (reply.statusCode !== 401) return done()
      lastAuthFailureAt = performance.now()
      authFailures(request).then(() => done(), done)
    })

    app.decorate(
      'countAccountRequest',
      async function countAccountRequest(request: FastifyRequest, reply: FastifyReply) {
        const status = await perAccount(request)
        if (status.isAllowed) return
        if (status.isExceeded)
          throw tooMany(
            'account',
            status,
            `This account made more than ${status.max} requests in ${settings.windowSeconds} s.`,
          )
        reply.headers(headers('account', status))
      },
    )
  },
  { name: 'rate-limit' },
)

interface LimitStatus {
  max: number
  timeWindow: number
  remaining: number
  ttlInSeconds: number
}

function headers(policy: string, status: LimitStatus): Record<string, string> {
  return {
    'ratelimit-policy': `"${policy}";q=${status.max};w=${Math.round(status.timeWindow / 1000)}`,
    ratelimit: `"${policy}";r=${status.remaining};t=${status.ttlInSeconds}`,
  }
}

function tooMany(policy: string, status: LimitStatus, detail: string): Problem {
  const retryAfter = String(Math.max(1, status.ttlInSeconds))
  return new Problem('rate-limited', detail, { headers: { ...headers(policy, status), 'retry-after': retryAfter } })
}
