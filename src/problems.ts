// RFC 9457 problem details: the one shape of every error this API returns.
import { STATUS_CODES } from 'node:http'

/** Forks point this at their own documentation; clients match on the last path segment. */
export const PROBLEM_TYPE_BASE = 'https://payments.example.com/problems/'
export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8'

/** Every problem type this API defines, with its HTTP status and fixed title. */
export const PROBLEM_TYPES = {
  'validation-failed': { status: 400, title: 'The request is not valid' },
  'idempotency-key-required': { status: 400, title: 'An Idempotency-Key header is required' },
  'idempotency-key-invalid': { status: 400, title: 'The Idempotency-Key header is not valid' },
  'webhook-url-refused': { status: 400, title: 'Webhooks cannot be sent to this URL' },
  unauthorized: { status: 401, title: 'A valid API key is required' },
  'card-declined': { status: 402, title: 'The card was declined' },
  'resource-not-found': { status: 404, title: 'No such resource' },
  'idempotency-request-in-flight': { status: 409, title: 'A request with this Idempotency-Key is still in progress' },
  'charge-operation-in-progress': { status: 409, title: 'Another capture or void of this charge is under way' },
  'charge-not-capturable': { status: 409, title: 'The charge has no authorization to capture or void' },
  'idempotency-key-reused': { status: 422, title: 'This Idempotency-Key was used for a different request' },
  'charge-not-refundable': { status: 422, title: 'The charge cannot be refunded' },
  'refund-exceeds-charge': { status: 422, title: 'The refund exceeds what is left of the charge' },
  'capture-exceeds-authorization': { status: 422, title: 'The capture exceeds the authorized amount' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  'processor-unavailable': { status: 503, title: 'The payment processor is unavailable' },
  'service-unavailable': { status: 503, title: 'The service is temporarily unavailable' },
} as const

export type ProblemType = keyof typeof PROBLEM_TYPES

export interface ProblemBody {
  type: string
  title: string
  status: number
  detail: string
  [extension: string]: unknown
}

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

/** A problem with no semantics beyond its HTTP status (RFC 9457 section 4.2.1). */
export function genericProblem(status: number, detail: string): ProblemBody {
  return { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, detail }
}
