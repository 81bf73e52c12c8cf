// Money moved by a worker task (a subscription's renewal, an invoice collected on its due date) goes through the
// same operation as a request's (./operation.ts): a key derived from what the task does (`${subscription}:${period}`),
// claimed with a lease; reserve, call out under the operation's id, complete with the task's writes; an unknown
// outcome left to the recovery worker, which settles it by the task's Recovery as it settles a request's. Two runs
// of the task for the same thing, one after the other or at the same instant, move the money once.
//
// A completed key is kept IDEMPOTENCY_TTL_SECONDS, then reaped: what must never happen twice after that is kept by
// the task's own rows, written in the completion (the period the renewal advanced), so that a later run does not
// find the work due. The key covers what the rows cannot: a crash between the call out and the record.
import type { Logger } from 'pino'
import type { Sql } from '../db/connect.js'
import { KeyClaims } from './claims.js'
import { Completions } from './completions.js'
import { requestFingerprint } from './fingerprint.js'
import type { PlatformPricing } from '../accounts/platform-pricing.js'
import { HeldOperation, type Operation, type OperationInput, recoveryRequest, startedBy } from './operation.js'
import type { Recovery } from './recovery.js'
import type { StoredResponse } from './response.js'
import type { Timing } from './store.js'

export interface KeyedTask {
  accountId: string
  /** The processor account its calls go to (Keyed.processorAccount): the account's link, read by the task. */
  processorAccount: string | null
  /** The platform's pricing there, if the task charges with it (src/charges/calls.ts): kept with the claim. */
  platformPricing?: PlatformPricing
  /** The task's name: a key is scoped to it (the key's endpoint is `task <name>`), as a request's is to its route. */
  task: string
  /** Derived from what the task does, the same on every run that does it, at most 255 characters. */
  key: string
  /** What the operation is asked, as a request would send it: fingerprinted, and kept for the Recovery. */
  input: OperationInput
  /** How an unknown outcome of its call out is settled; a task that calls out needs one, in the worker's registry. */
  recovery: Recovery | undefined
  /** The job's abort signal: once aborted (the worker stops), nothing new goes out. */
  signal?: AbortSignal | undefined
  log: Pick<Logger, 'error' | 'info'>
}

/** What came of a run: completed by this run, by an earlier one (its stored response), or held by another run now. */
export type KeyedTaskResult =
  | { outcome: 'completed' | 'replayed'; status: number; body: unknown }
  | { outcome: 'in-flight' }

export class KeyedTasks {
  readonly #claims: KeyClaims
  readonly #settings: ConstructorParameters<typeof HeldOperation>[0]

  constructor(sql: Sql, timing: Timing, options: { downstreamKeyRetentionSeconds?: number | undefined } = {}) {
    this.#claims = new KeyClaims(sql, timing)
    this.#settings = {
      sql,
      timing,
      completions: new Completions(sql),
      downstreamKeyRetentionSeconds: options.downstreamKeyRetentionSeconds,
    }
  }

  /**
   * Claims the task's key and runs `work` with its operation (which must end in operation.complete); or answers at
   * once with what an earlier run completed, or that another run holds the key. `work` failing lets the key go as
   * a request's failure does: freed, or, once the operation may be downstream, left for the recovery worker.
   */
  async run(task: KeyedTask, work: (operation: Operation) => Promise<StoredResponse>): Promise<KeyedTaskResult> {
    const endpoint = `task ${task.task}`
    const { accountId, key, input, recovery, processorAccount, platformPricing } = task
    const fingerprint = requestFingerprint({ method: 'TASK', route: task.task, ...input })
    const kept = recovery ? recoveryRequest(recovery, input, processorAccount, platformPricing) : null
    const result = await this.#claims.claim({ accountId, endpoint, key }, fingerprint, kept)
    switch (result.outcome) {
      case 'completed':
        return { outcome: 'replayed', ...bodyOf(result.response) }
      case 'in-flight':
        return result
      case 'fingerprint-mismatch':
        // A derived key names one operation: another input under it is a defect of the derivation, not a retry.
        throw new Error(`${endpoint}: key ${key} was first used for another input; derive one key per operation`)
    }
    const held = new HeldOperation(this.#settings, {
      ...startedBy(result),
      endpoint,
      accountId,
      processorAccount,
      platformPricing,
      recovery,
      input,
      deadline: task.signal,
      log: task.log,
    })
    try {
      const response = await work(held)
      if (!held.completed) throw new Error(`${endpoint}: the task's work ended without operation.complete`)
      return { outcome: 'completed', ...bodyOf(response) }
    } finally {
      if (!held.completed) await held.letGo()
    }
  }
}

function bodyOf(response: StoredResponse): { status: number; body: unknown } {
  return { status: response.status, body: JSON.parse(response.body.toString('utf8')) }
}
