// Bearer API-key authentication; routes opt in with `app.addHook('onRequest', app.authenticate)`. Positive
// lookups are cached for `cacheSeconds` (AUTH_CACHE_SECONDS), the bound on how long a revoked key still works.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ApiKeyCache } from '../accounts/api-key-cache.js'
import { type AuthenticatedAccount, findAccountByApiKey } from '../accounts/api-keys.js'
import type { Sql } from '../db/connect.js'
import { Problem } from '../problems.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated account; set by `authenticate` on the routes that use it. */
    account: AuthenticatedAccount
  }
  interface FastifyInstance {
    authenticate(request: FastifyRequest): Promise<void>
  }
}

// RFC 9110 section 11.1: the scheme is case-insensitive, and one or more spaces separate it from the token.
const BEARER = /^Bearer +([\x21-\x7e]{1,200})$/i

export interface AuthOptions {
  sql: Sql
  cacheSeconds?: number
  /**
   * Runs before a failed authentication is refused with 401: may refuse it otherwise (429, src/plugins/rate-limit.ts).
   */
  beforeRefusing?: (request: FastifyRequest) => Promise<void>
}

export default fp(
  async function auth(app: FastifyInstance, options: AuthOptions) {
    const cache = new ApiKeyCache<AuthenticatedAccount>((options.cacheSeconds ?? 0) * 1000)
    app.decorateRequest('account', null as unknown as AuthenticatedAccount)
    app.decorate('authenticate', async function authenticate(request: FastifyRequest) {
      const match = BEARER.exec(request.headers.authorization ?? '')
      const account = match?.[1] ? await findAccountByApiKey(options.sql, match[1], cache) : undefined
      if (!account) {
        await options.beforeRefusing?.(request)
        throw new Problem('unauthorized', refusal(request.headers.authorization, match?.[1]), {
          headers: { 'www-authenticate': 'Bearer realm="payments"' },
        })
      }
      request.account = account
    })
  },
  { name: 'auth' },
)

/** Why the key was refused, in words that say what to change. */
function refusal(header: string | undefined, token: string | undefined): string {
  if (header === undefined || header.trim() === '') return 'No API key: send it as "Authorization: Bearer sk_test_...".'
  if (token === undefined)
    return 'The Authorization header is not "Bearer <API key>": send it as "Authorization: Bearer sk_test_...".'
  // A variable that was never set, interpolated into the header.
  if (token === 'undefined' || token === 'null')
    return `No API key: the Authorization header carries the word "${token}" (is the variable that holds the key set?).`
  return 'The API key is not valid or has been revoked.'
}
