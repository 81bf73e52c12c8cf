// Idempotency-Key support for the routes that move money or make things. A route declares it in its options,
// `config: { idempotency: { required: true } }` (the OpenAPI document reads that declaration too), and its handler
// runs its work inside `reply.idempotent(async (operation) => ...)`, in the phases each route file names:
//   claim the key (or replay, 409, 422) -> operation.reserve (fenced by the claim) -> operation.callOut ->
//   operation.complete: the route's writes and the key's completion, one transaction -> or, on any failure, let go.
// Nothing runs that the handler does not call: a reader follows a request from its route to the database here.
// Authentication and schema validation come first (Fastify's hooks): a request refused by either never touches
// a key.
import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Sql, Transaction } from '../db/connect.js'
import { isDatabaseUnavailable } from '../db/errors.js'
import { requestFingerprint } from '../idempotency/fingerprint.js'
import { idempotencyKeyFromRawHeaders } from '../idempotency/key.js'
import type { RouteResponse, StoredResponse } from '../idempotency/response.js'
import { ReplayCache } from '../idempotency/replay-cache.js'
import { KeyClaims } from '../idempotency/claims.js'
import { Completions } from '../idempotency/completions.js'
import type { ClaimedOperation, Recovery } from '../idempotency/recovery.js'
import {
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

/**
 * One request's operation under its Idempotency-Key (or, sent without one, under an id of its own): what a
 * route's handler is given by reply.idempotent, and the only way it writes.
 */
export interface Operation {
  /**
   * The operation id: stable across retries and takeovers of the key. Written beside what is reserved for the
   * operation, and the idempotency key callOut forwards downstream.
   */
  readonly id: string
  /**
   * Runs `work` (a reservation made before calling out: a refund's amount, a pending capture) in a transaction
   * that commits only if this request still holds its key; otherwise it rolls back with a 409. Every write that
   * depends on holding the key is fenced by its token: its successor may be using the same reservation.
   */
  reserve<T>(work: (tx: Transaction) => Promise<T>): Promise<T>
  /**
   * The call out: hands the operation to whoever moves the money (a processor, a bank) under its id, the
   * idempotency key it must forward. From this moment the operation counts as possibly downstream, for this
   * request and every later holder of its key: a failure keeps the key bound to the operation, for a retry or
   * the recovery worker to settle. Refused once the request's deadline has passed (its client has been
   * answered, so nothing new goes out for it). A refusal that says nothing was performed (an error whose
   * `operationNotPerformed` is true: src/processor ProcessorRequestError) lets the key go again, unless an
   * earlier holder may have called out under it. Reservations come before it: a reservation refused with a 4xx
   * then leaves the key free for a corrected retry.
   */
  callOut<T>(call: (idempotencyKey: string) => Promise<T>): Promise<T>
  /**
   * Runs `work` (the writes that make the operation so: reads, locks, inserts) in a transaction that also
   * completes the key with the response `work` returns, then sends that response: both commit or neither does.
   * If the claim was taken over meanwhile (this request outlived its lease), nothing is written and the answer is
   * a 409. Requests completing at the same moment share one transaction (src/idempotency/completions.ts), each
   * work in turn: `work` writes only through `tx`, and may run a second time if another work of its transaction
   * failed.
   */
  complete(work: (tx: Transaction) => Promise<RouteResponse>): Promise<FastifyReply>
}

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

/** An operation's state, as reply.idempotent tracks it. */
interface Held {
  id: string
  /** Null for a request sent without a key. */
  claim: Claim | null
  completed: boolean
  /**
   * Set once the operation may be downstream: when this request calls out, or from the claim on when the claim
   * was taken over from an earlier holder (which may have called out). From then on a failure must not forget
   * the key nor give back what was reserved: "was it sent?" belongs to the operation, not to one request.
   */
  mayBeDownstream: boolean
  /** When the operation a takeover inherited was first claimed. */
  since: Date | undefined
  endpoint: string
  recovery: Recovery | undefined
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
    const completions = new Completions(sql, shared('commit'))

    app.decorateReply(
      'idempotent',
      async function idempotent(this: FastifyReply, run: (operation: Operation) => Promise<FastifyReply>) {
        const request = this.request
        const endpoint = `${request.method} ${request.routeOptions.url}`
        const settings = request.routeOptions.config.idempotency
        if (!settings)
          throw new Error(`${endpoint} calls reply.idempotent without declaring config: { idempotency: { ... } }`)
        const { recovery } = settings
        const key = idempotencyKeyFromRawHeaders(request.raw.rawHeaders)
        const held: Held = {
          id: '',
          claim: null,
          completed: false,
          mayBeDownstream: false,
          since: undefined,
          endpoint,
          recovery,
        }
        if (key === undefined) {
          if (settings.required) {
            throw new Problem(
              'idempotency-key-required',
              `${endpoint} requires an Idempotency-Key header; send a new unique value for each logical operation ` +
                `and the same value on every retry of it.`,
            )
          }
          held.id = randomUUID()
        } else {
          const result = await claimKey(request, { accountId: accountOf(request), endpoint, key }, recovery)
          if (result.outcome === 'completed') return replay(this, result.response)
          held.id = result.claim.operationId
          held.claim = result.claim
          held.mayBeDownstream = result.inherited
          held.since = result.operationSince
        }
        try {
          return await run(operationOf(this, held))
        } catch (error) {
          // The client already has its 503: a failure now has nowhere to go; say so once, quietly.
          if (!(request.deadline?.aborted && this.sent)) throw error
          request.log.warn({ err: error }, 'request failed after its deadline had been answered')
          return this
        } finally {
          if (!held.completed) await letGo(request, held)
        }
      },
    )

    /** The claim, or why not: a replay (returned), or a 409 or 422 (thrown). */
    async function claimKey(request: FastifyRequest, scope: KeyScope, recovery: Recovery | undefined) {
      const fingerprint = fingerprintOf(request)
      const result =
        remembered(replays, scope, fingerprint) ??
        (await claims.claim(scope, fingerprint, recovery ? requestOf(request, recovery) : null))
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

    function operationOf(reply: FastifyReply, held: Held): Operation {
      const request = reply.request
      return {
        id: held.id,
        async reserve(work) {
          const claim = held.claim
          return sql.begin(async (tx) => {
            const result = await work(tx)
            if (claim && !(await holdsClaim(tx, claim))) throw lostClaim()
            return result
          }) as Promise<Awaited<ReturnType<typeof work>>>
        },
        async callOut(call) {
          // Without a Recovery an unknown outcome of this call would never be settled by itself: a defect of the route.
          if (!held.recovery)
            throw new Error(
              `${held.endpoint} calls out without a Recovery: name one in its config: { idempotency: { recovery } } ` +
                `(docs/extending.md)`,
            )
          if (request.deadline?.aborted)
            throw new Problem('service-unavailable', 'The request ran out of time before the processor was called.')
          const inherited = held.mayBeDownstream
          if (inherited && outlivedDownstreamKeys(held.since)) {
            throw new Problem(
              'processor-unavailable',
              'This operation was first tried longer ago than the processor keeps its idempotency keys; it is ' +
                'being settled without calling out again. Retry later with the same Idempotency-Key and body.',
              { headers: { 'retry-after': '60' } },
            )
          }
          held.mayBeDownstream = true
          try {
            return await call(held.id)
          } catch (error) {
            if ((error as { operationNotPerformed?: unknown } | null)?.operationNotPerformed === true && !inherited)
              held.mayBeDownstream = false
            throw error
          }
        },
        async complete(work) {
          const stored = await completions.complete(held.claim, work).catch((error: unknown) => fencedOff(error, held))
          held.completed = true
          // Past the deadline the client already has its 503; a retry will replay what was just committed.
          if (reply.sent) return reply
          return reply.code(stored.status).headers(stored.headers).send(stored.body)
        },
      }
    }

    /**
     * A completion that failed because the claim was taken over is a 409: the completion itself said so (IK409), or
     * the work failed first on what the successor had already written (its charge, its settled capture), and
     * the claim, asked now, is no longer this holder's.
     */
    async function fencedOff(error: unknown, held: Held): Promise<never> {
      if (isTakenOver(error)) throw lostClaim()
      const claim = held.claim
      if (claim && !isDatabaseUnavailable(error) && !(await sql.begin((tx) => holdsClaim(tx, claim)).catch(() => true)))
        throw lostClaim()
      throw error
    }

    function outlivedDownstreamKeys(since: Date | undefined): boolean {
      const retention = options.downstreamKeyRetentionSeconds
      return since !== undefined && retention !== undefined && Date.now() - since.getTime() > retention * 1000
    }

    // An operation that ends without completing (an error, a lost claim, a deadline) lets go of its key: if it
    // cannot be downstream, the key is forgotten and what the request reserved is given back, in one transaction
    // fenced by the claim's token; otherwise the key stays bound to the operation, for a retry or the recovery
    // worker. A request without a key has no claim to fence: its operation id is its own.
    async function letGo(request: FastifyRequest, held: Held) {
      const { claim, recovery } = held
      const operation = (of: Recovery): ClaimedOperation => ({
        operationId: held.id,
        accountId: accountOf(request),
        request: requestOf(request, of),
      })
      if (!claim) {
        const release = recovery?.release
        if (!recovery || !release || held.mayBeDownstream) return
        await sql
          .begin((tx) => release(tx, operation(recovery)))
          .catch((error: unknown) => request.log.error({ err: error }, 'could not give back a reservation'))
        return
      }
      const downstream = held.mayBeDownstream
      idempotencyOutcomes.inc({ endpoint: held.endpoint, outcome: downstream ? 'lease_ended' : 'released' })
      const release = () =>
        downstream
          ? endLease(sql, claim, recovery ? timing.recoveryGraceSeconds : undefined)
          : sql.begin(async (tx) => {
              if ((await releaseClaim(tx, claim)) && recovery?.release) await recovery.release(tx, operation(recovery))
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
  },
  { name: 'idempotency', dependencies: ['auth'] },
)

/** A completion refused because the claim was taken over (our lease ran out): the work rolled back. */
function lostClaim(): Problem {
  return new Problem(
    'idempotency-request-in-flight',
    'This request outlived its lease on the Idempotency-Key and another request took it over; its work was rolled ' +
      'back.',
    {
      headers: { 'retry-after': RETRY_AFTER_SECONDS },
    },
  )
}

/** A replay answered from memory: the stored response, or a 422 when the request differs from the one stored. */
function remembered(replays: ReplayCache, scope: KeyScope, fingerprint: Buffer): ClaimResult | undefined {
  const completed = replays.get(scope)
  if (!completed) return undefined
  return completed.fingerprint.equals(fingerprint)
    ? { outcome: 'completed', response: completed.response }
    : { outcome: 'fingerprint-mismatch' }
}

/** What the recovery worker needs of a request: which Recovery, and the validated path parameters and body. */
function requestOf(request: FastifyRequest, recovery: Recovery): ClaimedOperation['request'] {
  return { recovery: recovery.name, params: request.params ?? {}, body: request.body ?? null }
}

/** Keys are scoped by account: a route without authentication cannot be idempotent. */
function accountOf(request: FastifyRequest): string {
  if (!request.account)
    throw new Error(`${request.routeOptions.url}: idempotency needs an authenticated account to scope keys`)
  return request.account.id
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
