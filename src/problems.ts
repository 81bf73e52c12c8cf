// RFC 9457 problem details: the one shape of every error this API returns.
import { STATUS_CODES } from 'node:http'
import { HTTP_STATUS_PROBLEMS, PROBLEM_TYPES, type ProblemBody, type ProblemType } from './schemas/problem-types.js'

/** Forks point this at their own documentation; clients match on the last path segment. */
export const PROBLEM_TYPE_BASE = 'https://payments.example.com/problems/'
export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8'

export { PROBLEM_TYPES, type ProblemBody, type ProblemType } from './schemas/problem-types.js'

/** An error that is rendered as a problem response; throw it from anywhere in a request. */
export class Problem extends Error {
  readonly status: number
  readonly body: ProblemBody
  readonly headers: Record<string, string>

  constructor(
    type: ProblemType,
    detail: string,
    options: { extensions?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(detail)
    this.body = problemBody(type, detail, options.extensions)
    this.status = this.body.status
    this.headers = options.headers ?? {}
  }
}

export function problemBody(type: ProblemType, detail: string, extensions: Record<string, unknown> = {}): ProblemBody {
  const { status, title } = PROBLEM_TYPES[type]
  return { type: PROBLEM_TYPE_BASE + type, title, status, detail, ...extensions }
}

/**
 * A refusal known only by its HTTP status (a route that does not exist, a body too large), with the documented
 * type for that status; a status without one (none is sent today) gets `http-error` and the status's own title.
 */
export function genericProblem(status: number, detail: string): ProblemBody {
  const type = HTTP_STATUS_PROBLEMS[status]
  if (type) return problemBody(type, detail)
  return { type: `${PROBLEM_TYPE_BASE}http-error`, title: STATUS_CODES[status] ?? 'Error', status, detail }
}
