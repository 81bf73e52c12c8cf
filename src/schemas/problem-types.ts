// Every problem type this API answers with: the server renders them (src/problems.ts), the client discriminates
// on them (src/client/errors.ts).

/** Every problem type this API defines, with its HTTP status and fixed title. */
export const PROBLEM_TYPES = {
  'validation-failed': { status: 400, title: 'The request is not valid' },
  'idempotency-key-required': { status: 400, title: 'An Idempotency-Key header is required' },
  'idempotency-key-invalid': { status: 400, title: 'The Idempotency-Key header is not valid' },
  'webhook-url-refused': { status: 400, title: 'Webhooks cannot be sent to this URL' },
  'cursor-not-found': { status: 400, title: 'The page cursor is not an item of this list' },
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
  'processor-refused': { status: 422, title: 'The payment processor refused the operation' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  'processor-unavailable': { status: 503, title: 'The payment processor is unavailable' },
  'service-unavailable': { status: 503, title: 'The service is temporarily unavailable' },
  'concurrent-update': { status: 503, title: 'Another request was changing the same data' },
  // HTTP-level refusals, before any route's own rules: each has a type too, so that clients can always branch on it.
  'malformed-request': { status: 400, title: 'The request is not valid HTTP or JSON' },
  'route-not-found': { status: 404, title: 'No such route' },
  'method-not-allowed': { status: 405, title: 'The route does not take this method' },
  'request-timeout': { status: 408, title: 'The request did not arrive in time' },
  'body-too-large': { status: 413, title: 'The request body is too large' },
  'unsupported-media-type': { status: 415, title: 'The request body must be JSON' },
  'headers-too-large': { status: 431, title: 'The request headers are too large' },
  'internal-error': { status: 500, title: 'An unexpected error occurred' },
} as const

/** The type of a refusal known only by its HTTP status (src/problems.ts httpProblem). */
export const HTTP_STATUS_PROBLEMS: Record<number, ProblemType> = {
  400: 'malformed-request',
  404: 'route-not-found',
  405: 'method-not-allowed',
  408: 'request-timeout',
  413: 'body-too-large',
  415: 'unsupported-media-type',
  431: 'headers-too-large',
  500: 'internal-error',
  503: 'service-unavailable',
}

export type ProblemType = keyof typeof PROBLEM_TYPES

/** An RFC 9457 problem body as this API sends it, with the extensions some types carry (decline_code, charge, ...). */
export interface ProblemBody {
  type: string
  title: string
  status: number
  detail: string
  [extension: string]: unknown
}
