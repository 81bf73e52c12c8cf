// Every problem type this API answers with, declared once: the server renders them (src/problems.ts), the client
// discriminates on them (src/client/errors.ts), and openapi.yaml's error responses are built from them
// (src/openapi/responses.ts): each type's status, title, what it means, the members it adds to the problem
// body, and the headers that come with it. Plain JSON Schema, no TypeBox: the client bundles this file.

type JsonSchema = Record<string, unknown>

export interface ProblemTypeSpec {
  status: number
  title: string
  /** For the document: when this is answered, and whether it is recorded against the Idempotency-Key. */
  description: string
  /** Members the body adds to type, title, status and detail; `required` lists those always present. */
  extensions?: { properties: Record<string, JsonSchema>; required?: string[] }
  /** Headers that come with it, besides X-Request-Id. */
  headers?: readonly ('Retry-After' | 'WWW-Authenticate' | 'RateLimit' | 'Idempotent-Replayed' | 'Allow')[]
}

/** Every problem type this API defines. */
/** The request fields a processor's refusal can name (ProcessorRequestError's field): `param` of processor-refused. */
export const REFUSED_FIELDS = ['source', 'amount_cents', 'currency', 'return_url', 'mandate'] as const

export const PROBLEM_TYPES = {
  'validation-failed': {
    status: 400,
    title: 'The request is not valid',
    description:
      'the request breaks its schema: `errors` says where and why (also for a body nested more than 32 deep, a ' +
      'string with NUL or an unpaired surrogate, an empty body where one is required). Nothing is recorded.',
    extensions: {
      properties: {
        errors: {
          type: 'array',
          items: {
            type: 'object',
            required: ['location', 'message'],
            properties: { location: { type: 'string', example: 'body/amount_cents' }, message: { type: 'string' } },
          },
        },
      },
    },
  },
  'idempotency-key-required': {
    status: 400,
    title: 'An Idempotency-Key header is required',
    description: 'the request has no `Idempotency-Key` header.',
  },
  'idempotency-key-invalid': {
    status: 400,
    title: 'The Idempotency-Key header is not valid',
    description: 'the `Idempotency-Key` is not 1 to 255 printable ASCII characters (or is sent twice).',
  },
  'webhook-url-refused': {
    status: 400,
    title: 'Webhooks cannot be sent to this URL',
    description:
      'the url is not an absolute https URL, or resolves to a loopback, private, link-local or metadata address ' +
      '(allowed only with `WEBHOOK_ALLOW_PRIVATE_URLS`).',
  },
  'webhook-signature-invalid': {
    status: 400,
    title: 'The webhook delivery is not the processor’s',
    description:
      'a delivery to `/processor/webhooks` that does not verify: no signature, one made with another secret, a ' +
      'body changed after signing, or a timestamp more than 5 minutes old. Nothing is applied.',
  },
  'cursor-not-found': {
    status: 400,
    title: 'The page cursor is not an item of this list',
    description: '`starting_after` or `ending_before` names no item of this list.',
  },
  unauthorized: {
    status: 401,
    title: 'A valid API key is required',
    description: 'no API key, or not a valid one.',
    headers: ['WWW-Authenticate'],
  },
  'card-declined': {
    status: 402,
    title: 'The card was declined',
    description:
      'the card was declined: the failed charge is recorded (`charge`), with the processor’s `decline_code`, and ' +
      'this answer is replayed on a retry.',
    extensions: {
      properties: {
        decline_code: { type: 'string', example: 'insufficient_funds' },
        charge: { type: 'string', pattern: '^ch_[0-9a-f]{24}$' },
      },
      required: ['decline_code', 'charge'],
    },
    headers: ['Idempotent-Replayed'],
  },
  'resource-not-found': { status: 404, title: 'No such resource', description: 'no such resource in your account.' },
  'processor-sends-no-webhooks': {
    status: 404,
    title: 'The processor in use sends no webhooks',
    description:
      'the processor in use sends no webhooks (the simulated one: its events are read from its list by the ' +
      'reconciliation).',
  },
  'idempotency-request-in-flight': {
    status: 409,
    title: 'A request with this Idempotency-Key is still in progress',
    description:
      'a request with this key is still being processed (or this one outlived its lease and another took the key ' +
      'over); retry after `Retry-After`. Nothing is recorded for this attempt.',
    headers: ['Retry-After'],
  },
  'charge-operation-in-progress': {
    status: 409,
    title: 'Another capture or void of this charge is under way',
    description:
      'another capture or void of this charge, with another key, is under way: its outcome decides this one; retry ' +
      'after `Retry-After`. Not recorded.',
    headers: ['Retry-After'],
  },
  'charge-not-capturable': {
    status: 409,
    title: 'The charge has no authorization to capture or void',
    description:
      'the charge is already captured, voided, expired or declined (`charge_status` says which). Not recorded.',
    extensions: { properties: { charge_status: { type: 'string' } }, required: ['charge_status'] },
  },
  'idempotency-key-reused': {
    status: 422,
    title: 'This Idempotency-Key was used for a different request',
    description: 'the key was already used with a different request body or path.',
  },
  'charge-not-refundable': {
    status: 422,
    title: 'The charge cannot be refunded',
    description:
      'the charge failed, was never captured, or is fully refunded. Not recorded, so the key may carry another ' +
      'request.',
  },
  'refund-exceeds-charge': {
    status: 422,
    title: 'The refund exceeds what is left of the charge',
    description:
      'the refund asks more than is left of the charge (`amount_refundable_cents`). Not recorded, so the key may ' +
      'carry a corrected amount.',
    extensions: { properties: { amount_refundable_cents: { type: 'integer' } }, required: ['amount_refundable_cents'] },
  },
  'capture-exceeds-authorization': {
    status: 422,
    title: 'The capture exceeds the authorized amount',
    description:
      'the capture asks more than was authorized (`amount_capturable_cents`). Not recorded, so the key may carry a ' +
      'corrected amount.',
    extensions: { properties: { amount_capturable_cents: { type: 'integer' } }, required: ['amount_capturable_cents'] },
  },
  'processor-refused': {
    status: 422,
    title: 'The payment processor refused the operation',
    description:
      'the payment processor refused the request and did nothing: `param` names the field to change where the ' +
      'request itself was refused (`source`: a payment method it does not know or cannot use; `amount_cents`: ' +
      'below its minimum), `processor_code` is its own code. Not recorded, so the key may carry a corrected ' +
      'request.',
    extensions: {
      properties: {
        param: { type: 'string', enum: [...REFUSED_FIELDS] },
        processor_code: { type: 'string', example: 'resource_missing' },
      },
      required: ['processor_code'],
    },
  },
  'rate-limited': {
    status: 429,
    title: 'Too many requests',
    description:
      'the account made too many requests in the window, or this address failed authentication too often. Nothing ' +
      'is recorded and no key is touched; retry after `Retry-After`.',
    headers: ['Retry-After', 'RateLimit'],
  },
  'processor-unavailable': {
    status: 503,
    title: 'The payment processor is unavailable',
    description:
      'the payment processor did not answer, so the outcome is not known yet: retry with the same key and body ' +
      '(the processor dedupes it); without a retry the service settles it within minutes.',
    headers: ['Retry-After'],
  },
  'service-unavailable': {
    status: 503,
    title: 'The service is temporarily unavailable',
    description:
      'the database did not answer, or the request could not finish within its deadline (4 s by default). Nothing ' +
      'was half-written; retry with the same key.',
    headers: ['Retry-After'],
  },
  'concurrent-update': {
    status: 503,
    title: 'Another request was changing the same data',
    description:
      'another request was changing the same data at the same moment; nothing was recorded. Retry with the same key.',
    headers: ['Retry-After'],
  },
  // HTTP-level refusals, before any route's own rules: each has a type too, so that clients can always branch on it.
  'malformed-request': {
    status: 400,
    title: 'The request is not valid HTTP or JSON',
    description: 'the body is not JSON, or the URL is not validly percent-encoded.',
  },
  'route-not-found': { status: 404, title: 'No such route', description: 'no route has this path.' },
  'method-not-allowed': {
    status: 405,
    title: 'The route does not take this method',
    description: 'the path takes other methods, which `Allow` lists.',
    headers: ['Allow'],
  },
  'request-timeout': {
    status: 408,
    title: 'The request did not arrive in time',
    description: 'the request body did not arrive in time. Nothing is recorded.',
  },
  'body-too-large': {
    status: 413,
    title: 'The request body is too large',
    description: 'the request body is too large.',
  },
  'unsupported-media-type': {
    status: 415,
    title: 'The request body must be JSON',
    description: 'the body is not `application/json` in UTF-8: send `Content-Type: application/json`.',
  },
  'headers-too-large': {
    status: 431,
    title: 'The request headers are too large',
    description: 'the request headers are too large.',
  },
  'internal-error': {
    status: 500,
    title: 'An unexpected error occurred',
    description: 'an unexpected error; the work was rolled back. Retry with the same key and body.',
  },
} as const satisfies Record<string, ProblemTypeSpec>

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
