// Idempotency-Key support for the routes that move money or make things. A route declares it in its options,
// `config: { idempotency: { required: true } }` (the OpenAPI document reads that declaration too), and its handler
// runs its work inside `reply.idempotent(async (operation) => ...)`, in the phases each route file names:
//   claim the key (or replay, 409, 422) -> operation.reserve (fenced by the claim) -> operation.callOut ->
//   operation.complete: the route's writes and the key's completion, one transaction -> or, on any failure, let go.
// This file claims (and replays, from memory or the store) and sends the reply; the phases after the claim are
// src/idempotency/operation.ts, which a worker task runs too (src/idempotency/keyed-task.ts).
// Nothing runs that the handler does not call: a reader follows a request from its route to the database here.
// Authentication and schema validation come first (Fastify's hooks): a request refused by either never touches
// a key.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Sql } from '../db/connect.js'
import type { AuthenticatedAccount } from '../accounts/api-keys.js'
import { requestFingerprint } from '../idempotency/fingerprint.js'
import { idempotencyKeyFromRawHeaders } from '../idempotency/key.js'
import type { RouteResponse, StoredResponse } from '../idempotency/response.js'
import { ReplayCache } from '../idempotency/replay-cache.js'
import { KeyClaims } from '../idempotency/claims.js'
import { Completions } from '../idempotency/completions.js'
import {
  type ClaimedStart,
  HeldOperation,
  type Operation as KeyedOperation,
  RETRY_AFTER_SECONDS,
  recoveryRequest,
  startedBy,
  withoutKey,
} from '../idempotency/operation.js'
import type { ClaimedOperation, Recovery } from '../idempotency/recovery.js'
import type { ClaimResult, KeyScope, Timing } from '../idempotency/store.js'
import {
  idempotencyOutcomes,
  statementBatchSize,
  statementSplits,
  statementStalls,
  type IdempotencyOutcome,
} from '../observability/metrics.js'
import { Problem } from '../problems.js'

export type { RouteResponse }

export interface IdempotencyOptions {
  sql: Sql
  timing: Timing
  /** Completed keys remembered per instance once replayed (IDEMPOTENCY_REPLAY_CACHE_SIZE); 0 turns it off. */
  replayCacheSize?: number
  /**
   * How long a shared claim statement or completion transaction may keep the requests behind it waiting
   * (src/db/batcher.ts): DATABASE_STATEMENT_TIMEOUT_MS, past which PostgreSQL itself would have cancelled a
   * statement it was running.
   */
  statementStallMs?: number
  /**
   * How long downstream keeps the idempotency keys it is sent (Stripe: at least 24 hours). A takeover of an
   * operation first claimed longer ago does not call out again: downstream may have forgotten the key and would
   * act a second time. It answers 503 and leaves the operation to the recovery worker, whose lookup then reads
   * without the key. Unset: downstream keeps keys for ever (the simulated processor's ledger).
   */
  downstreamKeyRetentionSeconds?: number | undefined
}

/** A request's operation (./operation.ts): its complete sends the response it committed. */
export type Operation = KeyedOperation<FastifyReply>

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route is idempotent: its handler runs in reply.idempotent; `required`: a request without a key is a 400.
     * `recovery`: how an unknown outcome of its call out is settled (src/idempotency/recovery.ts): its claims keep
     * the Recovery's name and their validated request, a lease ended after the call wakes the recovery worker,
     * which runs the Recovery of that name, and a request that lets go of its key before its operation went
     * downstream gives back what it reserved through the Recovery's `release`. A route that calls out needs one.
     */
    idempotency?: { required: boolean; recovery?: Recovery }
  }
  interface FastifyReply {
    /**
     * Claims the request's Idempotency-Key and runs `run` with its operation; or answers at once: the stored
     * response of a completed key (a replay), 409 while another request holds it, 422 for a different request
     * under it, 400 without a key where one is required. When `run` ends without completing (an error, a lost
     * claim, a deadline) the key is let go: freed for a retry, or, once the operation may be downstream, left for
     * a retry or the recovery worker to settle.
     */
    idempotent(run: (operation: Operation) => Promise<FastifyReply>): Promise<FastifyReply>
  }
}

const OUTCOME = {
  completed: 'replayed',
  'in-flight': 'in_flight',
  'fingerprint-mismatch': 'key_reused',
} as const satisfies Record<string, IdempotencyOutcome>

export default fp(
  async function idempotency(app: FastifyInstance, options: IdempotencyOptions) {
    const { sql, timing } = options
    const replays = new ReplayCache(options.replayCacheSize ?? 0)
    const shared = (statement: 'claim' | 'commit') => ({
      onBatch: (size: number) => statementBatchSize.observe({ statement }, size),
      stallAfterMs: options.statementStallMs,
      onStall: (size: number) => {
        statementStalls.inc({ statement })
        app.log.warn(
          { statement, requests: size },
          `a shared ${statement} statement has not answered in ${options.statementStallMs} ms (a silent ` +
            `connection); the requests behind it go out without it`,
        )
      },
      onSplit: (size: number, error: unknown) => {
        const code = (error as { code?: unknown } | null)?.code
        statementSplits.inc({ statement, code: typeof code === 'string' ? code : 'none' })
        app.log.warn(
          { statement, requests: size, err: error },
          `a shared ${statement} statement of ${size} requests failed; each is sent again alone`,
        )
      },
    })
    const claims = new KeyClaims(sql, timing, shared('claim'))

    const operations = {
      sql,
      timing,
      completions: new Completions(sql, shared('commit')),
      downstreamKeyRetentionSeconds: options.downstreamKeyRetentionSeconds,
    }

    app.decorateReply(
      'idempotent',
      async function idempotent(this: FastifyReply, run: (operation: Operation) => Promise<FastifyReply>) {
        const request = this.request
        const endpoint = `${request.method} ${request.routeOptions.url}`
        const settings = request.routeOptions.config.idempotency
        if (!settings)
          throw new Error(`${endpoint} calls reply.idempotent without declaring config: { idempotency: { ... } }`)
        const { recovery } = settings
        const { id: accountId, processorAccount, platformPricing } = accountOf(request)
        const input = { params: request.params, body: request.body }
        const key = idempotencyKeyFromRawHeaders(request.raw.rawHeaders)
        let claimed: ClaimedStart
        if (key === undefined) {
          if (settings.required) {
            throw new Problem(
              'idempotency-key-required',
              `${endpoint} requires an Idempotency-Key header; send a new unique value for each logical operation ` +
                `and the same value on every retry of it.`,
            )
          }
          claimed = withoutKey()
        } else {
          const result = await claimKey(
            request,
            { accountId, endpoint, key },
            recovery && recoveryRequest(recovery, input, processorAccount, platformPricing),
          )
          if (result.outcome === 'completed') return replay(this, result.response)
          claimed = startedBy(result)
        }
        const start = {
          endpoint,
          accountId,
          processorAccount,
          platformPricing,
          recovery,
          input,
          deadline: request.deadline,
          log: request.log,
        }
        const held = new HeldOperation(operations, { ...start, ...claimed })
        try {
          return await run(repliedBy(this, held))
        } catch (error) {
          // The client already has its 503: a failure now has nowhere to go; say so once, quietly.
          if (!(request.deadline?.aborted && this.sent)) throw error
          request.log.warn({ err: error }, 'request failed after its deadline had been answered')
          return this
        } finally {
          if (!held.completed) await held.letGo()
        }
      },
    )

    /** The claim, or why not: a replay (returned), or a 409 or 422 (thrown). */
    async function claimKey(request: FastifyRequest, scope: KeyScope, kept: ClaimedOperation['request'] | undefined) {
      const fingerprint = fingerprintOf(request)
      const result = remembered(replays, scope, fingerprint) ?? (await claims.claim(scope, fingerprint, kept ?? null))
      if (result.outcome === 'completed' && result.expiresInMs !== undefined)
        replays.set(scope, { fingerprint, response: result.response }, result.expiresInMs, result.askedAt)
      request.log[result.outcome === 'claimed' ? 'debug' : 'info'](
        { idempotency_key: scope.key, outcome: result.outcome },
        'idempotency key checked',
      )
      idempotencyOutcomes.inc({
        endpoint: scope.endpoint,
        outcome: result.outcome === 'claimed' ? (result.takenOver ? 'taken_over' : 'claimed') : OUTCOME[result.outcome],
      })
      switch (result.outcome) {
        case 'in-flight':
          throw new Problem(
            'idempotency-request-in-flight',
            'A request with this Idempotency-Key is still being processed; retry after the interval in Retry-After.',
            { headers: { 'retry-after': RETRY_AFTER_SECONDS } },
          )
        case 'fingerprint-mismatch':
          throw new Problem(
            'idempotency-key-reused',
            'This Idempotency-Key was already used with a different request body or path; use a new key for a new ' +
              'operation.',
          )
        default:
          return result
      }
    }
  },
  { name: 'idempotency', dependencies: ['auth'] },
)

/** The request's operation, whose completion also sends the response it committed. */
function repliedBy(reply: FastifyReply, held: HeldOperation): Operation {
  return {
    id: held.id,
    reserve: (work) => held.reserve(work),
    callOut: (call) => held.callOut(call),
    async complete(work) {
      const stored = await held.complete(work)
      // Past the deadline the client already has its 503; a retry will replay what was just committed.
      if (reply.sent) return reply
      return reply.code(stored.status).headers(stored.headers).send(stored.body)
    },
  }
}

/** A replay answered from memory: the stored response, or a 422 when the request differs from the one stored. */
function remembered(replays: ReplayCache, scope: KeyScope, fingerprint: Buffer): ClaimResult | undefined {
  const completed = replays.get(scope)
  if (!completed) return undefined
  return completed.fingerprint.equals(fingerprint)
    ? { outcome: 'completed', response: completed.response }
    : { outcome: 'fingerprint-mismatch' }
}

/** Keys are scoped by account: a route without authentication cannot be idempotent. */
function accountOf(request: FastifyRequest): AuthenticatedAccount {
  if (!request.account)
    throw new Error(`${request.routeOptions.url}: idempotency needs an authenticated account to scope keys`)
  return request.account
}

function fingerprintOf(request: FastifyRequest): Buffer {
  return requestFingerprint({
    method: request.method,
    route: request.routeOptions.url ?? '',
    params: request.params,
    body: request.body,
  })
}

function replay(reply: FastifyReply, response: StoredResponse): FastifyReply {
  return reply.code(response.status).headers(response.headers).header('idempotent-replayed', 'true').send(response.body)
}
