// One logical operation under one idempotency key, from its claim to its end: the phases a route runs through
// reply.idempotent (src/plugins/idempotency.ts) and a worker task runs through KeyedTasks.run (./keyed-task.ts), the
// same code for both:
//   claim the key (the caller) -> reserve (fenced by the claim) -> callOut -> complete: the writes and the key's
//   completion, one transaction -> or, on any failure, letGo.
// The model of this protocol (test/model/idempotency.pml) does not tell a request from a task: neither does this file.
import type { PlatformPricing } from '../accounts/platform-pricing.js'
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { Sql, Transaction } from '../db/connect.js'
import { isDatabaseUnavailable } from '../db/errors.js'
import { idempotencyOutcomes } from '../observability/metrics.js'
import { Problem } from '../problems.js'
import type { Completions } from './completions.js'
import type { ClaimedOperation, Recovery } from './recovery.js'
import type { RouteResponse, StoredResponse } from './response.js'
import { type Claim, type ClaimResult, endLease, holdsClaim, isTakenOver, releaseClaim, type Timing } from './store.js'

/**
 * An operation under its key (or, for a request sent without one, under an id of its own): what a route's handler
 * or a worker task is given, and the only way it writes. `Completed`: what complete answers (a request: its reply).
 */
export interface Operation<Completed = StoredResponse> {
  /**
   * The operation id: stable across retries and takeovers of the key. Written beside what is reserved for the
   * operation, and the idempotency key callOut forwards downstream.
   */
  readonly id: string
  /**
   * Runs `work` (a reservation made before calling out: a refund's amount, a pending capture) in a transaction
   * that commits only if the operation still holds its key; otherwise it rolls back with a 409. Every write that
   * depends on holding the key is fenced by its token: its successor may be using the same reservation.
   */
  reserve<T>(work: (tx: Transaction) => Promise<T>): Promise<T>
  /**
   * The call out: hands the operation to whoever moves the money (a processor, a bank) under its id, the
   * idempotency key it must forward. From this moment the operation counts as possibly downstream, for this
   * holder and every later holder of its key: a failure keeps the key bound to the operation, for a retry or
   * the recovery worker to settle. Refused once the deadline has passed (a request's client has been answered,
   * so nothing new goes out for it). A refusal that says nothing was performed (an error whose
   * `operationNotPerformed` is true: src/processor ProcessorRequestError) lets the key go again, unless an
   * earlier holder may have called out under it. Reservations come before it: a reservation refused with a 4xx
   * then leaves the key free for a corrected retry.
   */
  callOut<T>(call: (idempotencyKey: string) => Promise<T>): Promise<T>
  /**
   * Runs `work` (the writes that make the operation so: reads, locks, inserts) in a transaction that also
   * completes the key with the response `work` returns: both commit or neither does. If the claim was taken over
   * meanwhile (this holder outlived its lease), nothing is written and the answer is a 409. Operations completing
   * at the same moment share one transaction (./completions.ts), each work in turn: `work` writes only through
   * `tx`, and may run a second time if another work of its transaction failed.
   */
  complete(work: (tx: Transaction) => Promise<RouteResponse>): Promise<Completed>
}

/** What every operation shares: the database, the keys' timing, and the completions' shared transactions. */
export interface OperationSettings {
  sql: Sql
  timing: Timing
  completions: Completions
  /**
   * How long downstream keeps the idempotency keys it is sent (Stripe: at least 24 hours). A takeover of an
   * operation first claimed longer ago does not call out again: downstream may have forgotten the key and would
   * act a second time. It answers 503 and leaves the operation to the recovery worker, whose lookup then reads
   * without the key. Unset: downstream keeps keys for ever (the simulated processor's ledger).
   */
  downstreamKeyRetentionSeconds?: number | undefined
}

/** What the claim gave an operation. */
export interface ClaimedStart {
  id: string
  /** Null for a request sent without a key. */
  claim: Claim | null
  /** The claim took over an unsettled key: the operation may be downstream already (ClaimResult's `inherited`). */
  inherited: boolean
  /** When the operation a takeover inherited was first claimed. */
  since: Date | undefined
}

export function startedBy(result: Extract<ClaimResult, { outcome: 'claimed' }>): ClaimedStart {
  const { claim, inherited, operationSince } = result
  return { id: claim.operationId, claim, inherited, since: operationSince }
}

/** A request sent without a key: an operation id of its own, no claim to fence. */
export function withoutKey(): ClaimedStart {
  return { id: randomUUID(), claim: null, inherited: false, since: undefined }
}

/** One operation as its claim left it. */
export interface OperationStart extends ClaimedStart {
  /** The scope's endpoint ("POST /v1/charges", "task renew_subscriptions"): for messages and metrics. */
  endpoint: string
  accountId: string
  /** The processor account its calls go to (Keyed.processorAccount): kept with the claim for its Recovery. */
  processorAccount: string | null
  /** The platform's pricing there, if any: kept with the claim likewise. */
  platformPricing?: PlatformPricing | undefined
  recovery: Recovery | undefined
  /** The validated path parameters and body (a task: what it would have sent as a request), for the Recovery. */
  input: OperationInput
  /** Aborted once the caller's time is up (a request answered 503 at its deadline): nothing new goes out after. */
  deadline: { readonly aborted: boolean } | undefined
  log: Pick<Logger, 'error' | 'info'>
}

/** What an operation was asked: the validated path parameters and body. */
export interface OperationInput {
  params: unknown
  body: unknown
}

/**
 * What a claim keeps for the recovery worker: which Recovery settles it, what the operation was asked, and the
 * processor account its calls go to (a lost answer is asked about where the call went, whatever the link is later),
 * with the platform's pricing there if the account has one (the fee sent is the fee first sent).
 */
export function recoveryRequest(
  recovery: Recovery,
  input: OperationInput,
  processorAccount: string | null,
  platformPricing?: PlatformPricing,
): ClaimedOperation['request'] {
  const request = { recovery: recovery.name, params: input.params ?? {}, body: input.body ?? null, processorAccount }
  return platformPricing ? { ...request, platformPricing } : request
}

const RELEASE_RETRY_MS = 250

/** An operation in progress: its phases, and letGo for an end without completion. */
export class HeldOperation implements Operation {
  readonly id: string
  /** Set by complete once its transaction committed: from then on there is nothing to let go. */
  completed = false
  readonly #settings: OperationSettings
  readonly #start: OperationStart
  /**
   * Set once the operation may be downstream: when this holder calls out, or from the claim on when the claim
   * was taken over from an earlier holder (which may have called out). From then on a failure must not forget
   * the key nor give back what was reserved: "was it sent?" belongs to the operation, not to one holder.
   */
  #mayBeDownstream: boolean

  constructor(settings: OperationSettings, start: OperationStart) {
    this.#settings = settings
    this.#start = start
    this.id = start.id
    this.#mayBeDownstream = start.inherited
  }

  reserve<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    const claim = this.#start.claim
    return this.#settings.sql.begin(async (tx) => {
      const result = await work(tx)
      if (claim && !(await holdsClaim(tx, claim))) throw lostClaim()
      return result
    }) as Promise<T>
  }

  async callOut<T>(call: (idempotencyKey: string) => Promise<T>): Promise<T> {
    const { endpoint, recovery, deadline, since } = this.#start
    // Without a Recovery an unknown outcome of this call would never be settled by itself: a defect of the caller.
    if (!recovery)
      throw new Error(
        `${endpoint} calls out without a Recovery: name one where it declares idempotency (a route: its config: ` +
          `{ idempotency: { recovery } }; a task: its KeyedTask's recovery) (docs/extending.md)`,
      )
    if (deadline?.aborted)
      throw new Problem('service-unavailable', 'The request ran out of time before the processor was called.')
    const inherited = this.#mayBeDownstream
    if (inherited && this.#outlivedDownstreamKeys(since)) {
      throw new Problem(
        'processor-unavailable',
        'This operation was first tried longer ago than the processor keeps its idempotency keys; it is being ' +
          'settled without calling out again. Retry later with the same Idempotency-Key and body.',
        { headers: { 'retry-after': '60' } },
      )
    }
    this.#mayBeDownstream = true
    try {
      return await call(this.id)
    } catch (error) {
      if ((error as { operationNotPerformed?: unknown } | null)?.operationNotPerformed === true && !inherited)
        this.#mayBeDownstream = false
      throw error
    }
  }

  async complete(work: (tx: Transaction) => Promise<RouteResponse>): Promise<StoredResponse> {
    const stored = await this.#settings.completions
      .complete(this.#start.claim, work)
      .catch((error: unknown) => this.#fencedOff(error))
    this.completed = true
    return stored
  }

  /**
   * An operation that ends without completing (an error, a lost claim, a deadline) lets go of its key: if it
   * cannot be downstream, the key is forgotten and what was reserved is given back, in one transaction fenced by
   * the claim's token; otherwise the key stays bound to the operation, for a retry or the recovery worker. An
   * operation without a key has no claim to fence: its id is its own.
   */
  async letGo(): Promise<void> {
    const { sql, timing } = this.#settings
    const { claim, recovery, log } = this.#start
    const downstream = this.#mayBeDownstream
    if (!claim) {
      const release = recovery?.release
      if (!recovery || !release || downstream) return
      await sql
        .begin((tx) => release(tx, this.#claimed(recovery)))
        .catch((error: unknown) => log.error({ err: error }, 'could not give back a reservation'))
      return
    }
    idempotencyOutcomes.inc({ endpoint: this.#start.endpoint, outcome: downstream ? 'lease_ended' : 'released' })
    const release = () =>
      downstream
        ? endLease(sql, claim, recovery ? timing.recoveryGraceSeconds : undefined)
        : sql.begin(async (tx) => {
            if ((await releaseClaim(tx, claim)) && recovery?.release)
              await recovery.release(tx, this.#claimed(recovery))
          })
    const failed = (error: unknown) =>
      log.error({ err: error }, 'could not release idempotency claim; it frees itself when its lease ends')
    await release().catch((error: unknown) => {
      failed(error)
      if (!isDatabaseUnavailable(error)) return
      // The connection was lost under the statement (a failover, a terminated backend); another one usually
      // answers. Once more, in the background, so that a retry is not refused with 409 until the lease ends.
      setTimeout(
        () => void release().then(() => log.info('idempotency claim released on the second attempt'), failed),
        RELEASE_RETRY_MS,
      ).unref()
    })
  }

  #claimed(recovery: Recovery): ClaimedOperation {
    const { accountId, input, processorAccount, platformPricing } = this.#start
    const request = recoveryRequest(recovery, input, processorAccount, platformPricing)
    return { operationId: this.id, accountId, request }
  }

  /**
   * A completion that failed because the claim was taken over is a 409: the completion itself said so (IK409), or
   * the work failed first on what the successor had already written (its charge, its settled capture), and the
   * claim, asked now, is no longer this holder's.
   */
  async #fencedOff(error: unknown): Promise<never> {
    if (isTakenOver(error)) throw lostClaim()
    const claim = this.#start.claim
    const { sql } = this.#settings
    if (claim && !isDatabaseUnavailable(error) && !(await sql.begin((tx) => holdsClaim(tx, claim)).catch(() => true)))
      throw lostClaim()
    throw error
  }

  #outlivedDownstreamKeys(since: Date | undefined): boolean {
    const retention = this.#settings.downstreamKeyRetentionSeconds
    return since !== undefined && retention !== undefined && Date.now() - since.getTime() > retention * 1000
  }
}

export const RETRY_AFTER_SECONDS = '1'

/** A completion refused because the claim was taken over (our lease ran out): the work rolled back. */
export function lostClaim(): Problem {
  return new Problem(
    'idempotency-request-in-flight',
    'This request outlived its lease on the Idempotency-Key and another request took it over; its work was rolled ' +
      'back.',
    { headers: { 'retry-after': RETRY_AFTER_SECONDS } },
  )
}
