// What openapi.yaml says around the operations: what the API is and promises, its tags, how to authenticate, the
// Idempotency-Key, the webhook deliveries it sends, and the reference page (a plugin's route, not one of ours).
import { IDEMPOTENCY_KEY_HEADER } from '../schemas/idempotency-key.js'
import type { JsonSchema } from './schemas.js'

export const INFO = {
  title: 'Payments API',
  version: '0.1.0',
  summary: 'Charges and refunds whose money-moving writes are safe to retry.',
  // Its first line is a string of its own, to keep it within 120 columns.
  description: [
    'Every POST that moves money takes an `Idempotency-Key` header (draft-ietf-httpapi-idempotency-key-header).',
    `The server records, per account, endpoint and key, a fingerprint of the request and, once the work commits, the
exact response. A retry with the same key and the same request gets that response again, byte for byte, with
\`Idempotent-Replayed: true\`.

- Same key, different request: \`422 idempotency-key-reused\`.
- Same key while the first request is still running: \`409 idempotency-request-in-flight\`, with \`Retry-After\`.
- Validation, authentication and in-flight errors are not recorded; neither is any failure that rolled the work
  back (5xx, \`503 processor-unavailable\`, refund and capture rule violations, \`422 processor-refused\`). Retry
  those with the same key. Once the processor may have been called the key stays bound to the request: retry it
  unchanged.
- An unknown outcome (the processor was called, its answer was lost) settles itself: if no retry comes within a
  minute, the service asks the processor and records what it did, with the response this request would have
  returned; a later retry replays it. If the processor never saw it, the key is released.
- A recorded response is kept for 24 hours (configurable); after that the key names a new request. A key whose
  outcome is not yet known never expires: it stays bound to its request until that is settled.

Use one new key (a UUID, or a durable derived key such as \`charge:<invoice>:attempt:<n>\`) per logical operation,
and send that same key on every retry of it.

Every error is \`application/problem+json\` (RFC 9457). Clients should branch on the last path segment of \`type\`.

Limits and guarantees of every request:
- Every response carries \`X-Request-Id\` (a valid incoming one is reused), \`Cache-Control: no-store\` and
  \`X-Content-Type-Options: nosniff\`.
- A request is answered within its deadline (4 s by default): if the database is unreachable or too slow, with
  \`503 service-unavailable\` and \`Retry-After\`. Nothing is half-written; retry with the same key.
- Each account may make 6,000 requests a minute per instance (configurable): past that, \`429 rate-limited\` with
  \`Retry-After\`. Authenticated responses carry \`RateLimit\` and \`RateLimit-Policy\`
  (draft-ietf-httpapi-ratelimit-headers). An address that fails authentication 20 times in a minute gets \`429\`
  instead of \`401\` for its failing requests for the rest of it (valid keys are still served).
- Strings anywhere in a request (body values and keys, path and query) may not contain NUL or unpaired UTF-16
  surrogates (\`400 validation-failed\`: PostgreSQL would refuse the first and rewrite the second); JSON bodies must
  be UTF-8 and nest at most 32 arrays and objects deep. Query numbers are plain decimal integers. Unknown query
  parameters and body fields are rejected with \`400 validation-failed\`.
- A method a path does not take is \`405 method-not-allowed\` with \`Allow\`.
`,
  ].join('\n'),
  license: { name: 'MIT', identifier: 'MIT' },
}

export const SERVERS = [
  {
    url: '/',
    description: 'the server this document was fetched from (Try it out in /docs calls the server that served it)',
  },
  { url: 'http://127.0.0.1:3000', description: 'npm start' },
]

/** What the tags operations are grouped under mean; a tag of a fork's own needs no line here (it then has none). */
export const TAGS: Record<string, string> = {
  Charges: 'Charges, authorizations, captures and voids; every POST takes an Idempotency-Key.',
  Refunds: 'Refunds of captured money.',
  Balance: 'What the account holds at the processor, and every movement of its money (docs/ledger.md).',
  Payouts: 'The processor’s payouts of the balance to the bank: what each carried of this account’s money.',
  Events: 'What happened to your charges and payouts, as sent to your webhook endpoints.',
  'Webhook endpoints': 'Where events are sent, signed (Standard Webhooks), and what was delivered.',
  Service: 'Health and this document.',
  Processor: 'What the payment processor tells the service: its webhooks, signed by the processor, not by an API key.',
}

export const SECURITY_SCHEMES = {
  apiKey: {
    type: 'http',
    scheme: 'bearer',
    description: '`Authorization: Bearer sk_test_...`, as printed by `npm run account:create`.',
  },
}

export const IDEMPOTENCY_KEY_PARAMETER = IDEMPOTENCY_KEY_HEADER

/** The reference page: Swagger UI's route, served from the service's own files. */
export const REFERENCE_PAGE = {
  tags: ['Service'],
  operationId: 'reference',
  summary: 'This document as an interactive reference page (Swagger UI, served by the service itself)',
  security: [],
  responses: {
    '200': { description: 'The reference page.', content: { 'text/html': { schema: { type: 'string' } } } },
    '302': { description: 'A redirect to the page (with a trailing slash).' },
  },
}

/** What a webhook endpoint receives: every event it enabled, signed (Standard Webhooks). */
export function webhooks(event: JsonSchema): JsonSchema {
  return {
    event: {
      post: {
        operationId: 'receiveEvent',
        summary: 'An event, delivered to a webhook endpoint (Standard Webhooks)',
        description:
          'Sent for each event type the endpoint enabled. `webhook-id` is the event id, the same on every retry ' +
          'and redelivery: apply each id once. Verify `webhook-signature` (`v1,` + base64 HMAC-SHA256 over ' +
          '`<webhook-id>.<webhook-timestamp>.<body>`, keyed by the base64 part of the `whsec_` secret; two ' +
          'signatures for 24 hours after a rotation) with any Standard Webhooks library, and refuse old ' +
          'timestamps. Answer 2xx within 15 s; anything else, a timeout or a network error is retried after 5 s, 5 ' +
          'min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h (with jitter; `Retry-After` on 429 and 503 is ' +
          'honoured); `410 Gone` disables the endpoint.',
        parameters: [
          {
            name: 'webhook-id',
            in: 'header',
            required: true,
            description: 'The event id.',
            schema: { type: 'string' },
          },
          {
            name: 'webhook-timestamp',
            in: 'header',
            required: true,
            description: 'Unix seconds of this attempt.',
            schema: { type: 'string' },
          },
          {
            name: 'webhook-signature',
            in: 'header',
            required: true,
            description: 'Space-separated `v1,<base64>` signatures.',
            schema: { type: 'string' },
          },
        ],
        requestBody: { required: true, content: { 'application/json': { schema: event } } },
        responses: {
          '200': { description: 'Received (any 2xx).' },
          '410': { description: 'Gone: the endpoint is disabled.' },
        },
      },
    },
  }
}
