// What a call throws: a ProblemError when the API answered with an error, a ConnectionError when no answer came
// back at all. Both say how many attempts were made and which Idempotency-Key they carried: after a
// ConnectionError whose request may have been sent, the outcome of a POST is unknown, and retrying later with that
// same key settles it; one whose request never left (nothing listens there) did nothing.
import { PROBLEM_TYPES, type ProblemBody, type ProblemType } from '../schemas/problem-types.js'

export type { ProblemBody }

/** The problem's `type`, by its last path segment; `unrecognized` when the answer was not this API's problem+json. */
export type ProblemSlug = ProblemType | 'unrecognized'

interface AttemptInfo {
  attempts: number
  idempotencyKey: string | undefined
}

export class ProblemError extends Error {
  override readonly name = 'ProblemError'
  /** Switch on this: `card-declined`, `idempotency-key-reused`, `idempotency-request-in-flight`, ... */
  readonly type: ProblemSlug
  readonly status: number
  readonly problem: ProblemBody
  /** The X-Request-Id to quote in a support ticket. */
  readonly requestId: string | undefined
  readonly attempts: number
  readonly idempotencyKey: string | undefined

  constructor(problem: ProblemBody, requestId: string | undefined, info: AttemptInfo) {
    super(`${problem.status} ${problem.title}: ${problem.detail}`)
    this.problem = problem
    this.status = problem.status
    this.type = slugOf(problem.type)
    this.requestId = requestId
    this.attempts = info.attempts
    this.idempotencyKey = info.idempotencyKey
  }

  /** Narrows to one problem type: `if (error instanceof ProblemError && error.is('card-declined'))`. */
  is<T extends ProblemSlug>(type: T): this is ProblemError & { type: T } {
    return this.type === type
  }
}

export class ConnectionError extends Error {
  override readonly name = 'ConnectionError'
  readonly attempts: number
  readonly idempotencyKey: string | undefined
  /**
   * Whether any attempt may have reached the server. False when every connection was refused or its host not
   * found: the request never left, nothing was done, and the outcome is known. True otherwise (a timeout, a reset,
   * an answer that was not JSON): for a POST the outcome is unknown until a call with the same key settles it.
   */
  readonly requestSent: boolean

  constructor(message: string, cause: unknown, info: AttemptInfo & { requestSent: boolean }) {
    super(message, { cause })
    this.attempts = info.attempts
    this.idempotencyKey = info.idempotencyKey
    this.requestSent = info.requestSent
  }
}

function slugOf(type: string): ProblemSlug {
  const slug = type.slice(type.lastIndexOf('/') + 1)
  return Object.hasOwn(PROBLEM_TYPES, slug) ? (slug as ProblemType) : 'unrecognized'
}
