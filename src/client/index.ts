// payments-api/client: a typed client for this API that holds each operation's Idempotency-Key still across its
// retries. See docs/client.md.
export { createClient, type PaymentsClient } from './client.js'
export { ConnectionError, ProblemError, type ProblemBody, type ProblemSlug } from './errors.js'
export { idempotencyKey } from './idempotency-key.js'
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.js'
export type { ApiResponse, CallOptions, ClientOptions, IdempotentCallOptions } from './transport.js'
export type * from './types.js'
export { verifyWebhook, WebhookVerificationError } from './webhooks.js'
