// Idempotency-Key support that a route opts into with `config: { idempotency: { required: true } }`.
// The route does its writes in `reply.transact(work)`: the writes and the stored response commit together.
//
// The plugin wraps the route's handler, so a claim lives exactly as long as the handler runs:
//   claim the key (or replay, 409, 422) -> run the handler -> complete in its transaction, or release.
// It comes after authentication and schema validation: a request refused by either never touches a key.
import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { Sql, Transaction } from '../db/connect.js'
import { isDatabaseUnavailable } from '../db/errors.js'
import { pipelinedTransaction } from '../db/pipeline.js'
import { requestFingerprint } from '../idempotency/fingerprint.js'
import { idempotencyKeyFromRawHeaders } from '../idempotency/key.js'
import { toStoredResponse, type Recorded, type RouteResponse, type StoredResponse } from '../idempotency/response.js'
import { ReplayCache } from '../idempotency/replay-cache.js'
import { KeyClaims } from '../idempotency/claims.js'
import { Commits } from '../idempotency/commits.js'
import type { ClaimedOperation, Recovery } from '../idempotency/recovery.js'
import {
  completeClaim,
  endLease,
  holdsClaim,
  isTakenOver,
  releaseClaim,
  type Claim,
  type ClaimResult,
  type KeyScope,
  type Timing,
} from '../idempotency/store.js'
import {
  idempotencyOutcomes,
  statementBatchSize,
  statementStalls,
  type IdempotencyOutcome,
} from '../observability/metrics.js'
import { Problem } from '../problems.js'

export type { Recorded, RouteResponse }

export interface IdempotencyOptions {
  sql: Sql
  timing: Timing
  /**
   * How abandoned claims of an endpoint are settled (src/idempotency/recovery.ts; the service's own are listed in
   * src/recovery/registry.ts). Claims on these endpoints keep their validated request, a lease ended after the
   * processor call wakes the recovery worker, which runs the same Recovery, and a request that lets go of its key
   * before its operation went downstream gives back what it reserved through the Recovery's `release`.
   */
  recoveries?: readonly Recovery[]
  /** Completed keys remembered per instance once replayed (IDEMPOTENCY_REPLAY_CACHE_SIZE); 0 turns it off. */
  replayCacheSize?: number
  /**
   * How long a shared claim or commit statement may keep the requests behind it waiting (src/db/batcher.ts):
   * DATABASE_STATEMENT_TIMEOUT_MS, past which PostgreSQL itself would have cancelled a statement it was running.
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

interface HeldClaim extends Claim {
  endpoint: string
  recovery: Recovery | undefined
  /** When the operation a takeover inherited was first claimed. */
  operationSince?: Date | undefined
}

declare module 'fastify' {
  interface FastifyContextConfig {
    idempotency?: { required: boolean }
  }
  interface FastifyRequest {
    /** The claim this request holds on its Idempotency-Key, until the response is committed. */
    idempotencyClaim: HeldClaim | null
    /** The operation id of a request sent without a key (made on first use). */
    keylessOperationId: string | null
    /**
     * Set once the operation may be downstream: when this request hands its id out, or from the claim on when the
     * claim was taken over from an earlier holder (which may have called out). From then on a rollback must not
     * forget the key nor give back what was reserved: "was it sent?" belongs to the operation, not to one request.
     */
    operationMayBeDownstream: boolean
  }
  interface FastifyReply {
    /** Runs `work` in a transaction that also records its response against the request's key, then sends it. */
    transact(work: (tx: Transaction) => Promise<RouteResponse>): Promise<FastifyReply>
    /**
     * Runs `work` (a reservation made before calling out: a refund's amount, a pending capture) in a transaction
     * that commits only if this request still holds its key; otherwise it rolls back with a 409. Every write that
     * depends on holding the key is fenced by its token: its successor may be using the same reservation.
     */
    reserve<T>(work: (tx: Transaction) => Promise<T>): Promise<T>
    /**
     * Inserts the rows the route recorded and completes the request's key in one statement (one round trip, no
     * transaction held open), shared with the requests committing at the same moment, then sends the response.
     * For records that need no reads.
     */
    commit(recorded: Recorded): Promise<FastifyReply>
    /**
     * The call out: hands the operation to whoever moves the money (a processor, a bank) under its operation id,
     * the idempotency key it must forward. From this moment the operation counts as possibly downstream, for this
     * request and every later holder of its key: a rollback keeps the key bound to the operation, for a retry or
     * the recovery worker to settle. Refused once the request's deadline has passed (its client has been answered,
     * so nothing new goes out for it). A refusal that says nothing was performed (an error whose
     * `operationNotPerformed` is true: src/processor ProcessorRequestError) lets the key go again, unless an
     * earlier holder may have called out under it. Reservations come before it: a reservation refused with a 4xx
     * then leaves the key free for a corrected retry.
     */
    callOut<T>(call: (idempotencyKey: string) => Promise<T>): Promise<T>
  }
}

const RETRY_AFTER_SECONDS = '1'
const RELEASE_RETRY_MS = 250
const OUTCOME = {
  completed: 'replayed',
  'in-flight': 'in_flight',
  'fingerprint-mismatch': 'key_reused',
} as const satisfies Record<string, IdempotencyOutcome>

export default fp(
  async function idempotency(app: FastifyInstance, options: IdempotencyOptions) {
    const { sql, timing } = options
    const recoveryOf = new Map((options.recoveries ?? []).map((recovery) => [recovery.endpoint, recovery]))
    const replays = new ReplayCache(options.replayCacheSize ?? 0)
    const shared = (statement: 'claim' | 'commit') => ({
      onBatch: (size: number) => statementBatchSize.observe({ statement }, size),
      stallAfterMs: options.statementStallMs,
      onStall: (size: number) => {
        statementStalls.inc({ statement })
        app.log.warn(
          { statement, requests: size },
          `a shared ${statement} statement has not answered in ${options.statementStallMs} ms (a silent connection); the requests behind it go out without it`,
        )
      },
    })
    const claims = new KeyClaims(sql, timing, shared('claim'))
    const commits = new Commits(sql, shared('commit'))
    app.decorateRequest('idempotencyClaim', null)
    app.decorateRequest('keylessOperationId', null)
    app.decorateRequest('operationMayBeDownstream', false)

    app.addHook('onRoute', (route: RouteOptions) => {
      const settings = route.config?.idempotency
      if (!settings) return
      const handler = route.handler
      route.handler = async function idempotent(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
        const key = idempotencyKeyFromRawHeaders(request.raw.rawHeaders)
        const recovery = recoveryOf.get(`${request.method} ${request.routeOptions.url}`)
        if (key === undefined) {
          if (settings.required) {
            throw new Problem(
              'idempotency-key-required',
              `${request.method} ${request.routeOptions.url} requires an Idempotency-Key header; send a new unique value for each logical operation and the same value on every retry of it.`,
            )
          }
          try {
            return await handler.call(this, request, reply)
          } finally {
            await giveBackKeyless(request, recovery)
          }
        }
        const scope = scopeOf(request, key)
        const fingerprint = fingerprintOf(request)
        const result =
          remembered(replays, scope, fingerprint) ??
          (await claims.claim(scope, fingerprint, recovery ? requestOf(request) : null))
        if (result.outcome === 'completed' && result.expiresInMs !== undefined)
          replays.set(scope, { fingerprint, response: result.response }, result.expiresInMs, result.askedAt)
        request.log[result.outcome === 'claimed' ? 'debug' : 'info'](
          { idempotency_key: key, outcome: result.outcome },
          'idempotency key checked',
        )
        idempotencyOutcomes.inc({
          endpoint: scope.endpoint,
          outcome:
            result.outcome === 'claimed' ? (result.takenOver ? 'taken_over' : 'claimed') : OUTCOME[result.outcome],
        })
        switch (result.outcome) {
          case 'completed':
            return replay(reply, result.response)
          case 'in-flight':
            throw new Problem(
              'idempotency-request-in-flight',
              'A request with this Idempotency-Key is still being processed; retry after the interval in Retry-After.',
              {
                headers: { 'retry-after': RETRY_AFTER_SECONDS },
              },
            )
          case 'fingerprint-mismatch':
            throw new Problem(
              'idempotency-key-reused',
              'This Idempotency-Key was already used with a different request body or path; use a new key for a new operation.',
            )
          case 'claimed':
            request.idempotencyClaim = {
              ...result.claim,
              endpoint: scope.endpoint,
              recovery,
              operationSince: result.operationSince,
            }
            request.operationMayBeDownstream = result.inherited
        }
        try {
          return await handler.call(this, request, reply)
        } finally {
          await letGo(request)
        }
      }
    })

    // A handler that ends without committing its response (an error, a rollback, a deadline) frees the key for a
    // retry: for any request if its operation cannot be downstream (the key is forgotten and what the request
    // reserved is given back, in one transaction fenced by the claim's token), otherwise for this same request only.
    async function letGo(request: FastifyRequest) {
      const claim = request.idempotencyClaim
      if (!claim) return
      request.idempotencyClaim = null
      const downstream = request.operationMayBeDownstream
      idempotencyOutcomes.inc({ endpoint: claim.endpoint, outcome: downstream ? 'lease_ended' : 'released' })
      const operation = { operationId: claim.operationId, accountId: request.account.id, request: requestOf(request) }
      const release = () =>
        downstream
          ? endLease(sql, claim, claim.recovery ? timing.recoveryGraceSeconds : undefined)
          : sql.begin(async (tx) => {
              if (await releaseClaim(tx, claim)) await claim.recovery?.release?.(tx, operation)
            })
      const failed = (error: unknown) =>
        request.log.error({ err: error }, 'could not release idempotency claim; it frees itself when its lease ends')
      await release().catch((error: unknown) => {
        failed(error)
        if (!isDatabaseUnavailable(error)) return
        // The connection was lost under the statement (a failover, a terminated backend); another one usually
        // answers. Once more, in the background, so that a retry is not refused with 409 until the lease ends.
        setTimeout(
          () => void release().then(() => request.log.info('idempotency claim released on the second attempt'), failed),
          RELEASE_RETRY_MS,
        ).unref()
      })
    }

    // A request sent without a key has no claim to fence: its operation id is its own, so what it reserved is
    // given back when the operation never went downstream.
    async function giveBackKeyless(request: FastifyRequest, recovery: Recovery | undefined) {
      const operationId = request.keylessOperationId
      const release = recovery?.release
      if (!release || operationId === null || request.operationMayBeDownstream) return
      const operation: ClaimedOperation = { operationId, accountId: request.account.id, request: requestOf(request) }
      await sql
        .begin((tx) => release(tx, operation))
        .catch((error: unknown) => request.log.error({ err: error }, 'could not give back a reservation'))
    }

    app.decorateReply('reserve', async function reserve<
      T,
    >(this: FastifyReply, work: (tx: Transaction) => Promise<T>): Promise<T> {
      const claim = this.request.idempotencyClaim
      const reserved = await sql.begin(async (tx) => {
        const result = await work(tx)
        if (claim && !(await holdsClaim(tx, claim))) throw lostClaim()
        return result
      })
      return reserved as T
    })

    app.decorateReply(
      'transact',
      async function transact(this: FastifyReply, work: (tx: Transaction) => Promise<RouteResponse>) {
        const claim = this.request.idempotencyClaim
        const stored = await pipelinedTransaction(sql, async (tx) => {
          const response = toStoredResponse(await work(tx))
          if (claim) completeClaim(tx, claim, response)
          return response
        }).catch(fencedOff)
        return sendCommitted(this, stored)
      },
    )

    app.decorateReply('callOut', async function callOut<
      T,
    >(this: FastifyReply, call: (idempotencyKey: string) => Promise<T>): Promise<T> {
      const request = this.request
      const endpoint = `${request.method} ${request.routeOptions.url}`
      // Without a Recovery an unknown outcome of this call would never be settled by itself: a defect of the route.
      if (!recoveryOf.has(endpoint))
        throw new Error(
          `${endpoint} calls out without a Recovery: register one for it in src/recovery/registry.ts (docs/extending.md)`,
        )
      if (request.deadline?.aborted)
        throw new Problem('service-unavailable', 'The request ran out of time before the processor was called.')
      const inherited = request.operationMayBeDownstream
      const since = request.idempotencyClaim?.operationSince
      if (
        inherited &&
        since &&
        options.downstreamKeyRetentionSeconds !== undefined &&
        Date.now() - since.getTime() > options.downstreamKeyRetentionSeconds * 1000
      ) {
        throw new Problem(
          'processor-unavailable',
          'This operation was first tried longer ago than the processor keeps its idempotency keys; it is being settled without calling out again. Retry later with the same Idempotency-Key and body.',
          {
            headers: { 'retry-after': '60' },
          },
        )
      }
      request.operationMayBeDownstream = true
      try {
        return await call(operationIdOf(request))
      } catch (error) {
        if ((error as { operationNotPerformed?: unknown } | null)?.operationNotPerformed === true && !inherited)
          request.operationMayBeDownstream = false
        throw error
      }
    })

    app.decorateReply('commit', async function commit(this: FastifyReply, recorded: Recorded) {
      const stored = toStoredResponse(recorded.response)
      if (!(await commits.commit(recorded.writes, this.request.idempotencyClaim, stored))) throw lostClaim()
      return sendCommitted(this, stored)
    })
  },
  { name: 'idempotency', dependencies: ['auth'] },
)

/** A completion refused because the claim was taken over (our lease ran out): the work rolled back. */
function fencedOff(error: unknown): never {
  if (!isTakenOver(error)) throw error
  throw lostClaim()
}

function lostClaim(): Problem {
  return new Problem(
    'idempotency-request-in-flight',
    'This request outlived its lease on the Idempotency-Key and another request took it over; its work was rolled back.',
    {
      headers: { 'retry-after': RETRY_AFTER_SECONDS },
    },
  )
}

function sendCommitted(reply: FastifyReply, stored: StoredResponse): FastifyReply {
  reply.request.idempotencyClaim = null
  // Past the deadline the client already has its 503; a retry will replay what was just committed.
  if (reply.sent) return reply
  return reply.code(stored.status).headers(stored.headers).send(stored.body)
}

/** The operation id, without handing it out: to write it beside work reserved before the call out. */
export function operationIdOf(request: FastifyRequest): string {
  if (request.idempotencyClaim) return request.idempotencyClaim.operationId
  request.keylessOperationId ??= randomUUID()
  return request.keylessOperationId
}

/** A replay answered from memory: the stored response, or a 422 when the request differs from the one stored. */
function remembered(replays: ReplayCache, scope: KeyScope, fingerprint: Buffer): ClaimResult | undefined {
  const completed = replays.get(scope)
  if (!completed) return undefined
  return completed.fingerprint.equals(fingerprint)
    ? { outcome: 'completed', response: completed.response }
    : { outcome: 'fingerprint-mismatch' }
}

/** What a Recovery needs of a request: its validated path parameters and body. */
function requestOf(request: FastifyRequest): ClaimedOperation['request'] {
  return { params: request.params ?? {}, body: request.body ?? null }
}

function scopeOf(request: FastifyRequest, key: string): KeyScope {
  if (!request.account)
    throw new Error(`${request.routeOptions.url}: idempotency needs an authenticated account to scope keys`)
  return { accountId: request.account.id, endpoint: `${request.method} ${request.routeOptions.url}`, key }
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
