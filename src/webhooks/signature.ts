// Standard Webhooks signatures (standardwebhooks.com): an HMAC-SHA256, keyed by the base64 secret after "whsec_",
// over "<webhook-id>.<webhook-timestamp>.<body>", sent as "v1,<base64>"; several space-separated while a rotated
// secret still signs. Any Standard Webhooks library verifies them (the tests use the `standardwebhooks` package).
import { createHmac, randomBytes } from 'node:crypto'

export function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`
}

export function signatureHeader(secrets: string[], id: string, timestamp: number, body: string): string {
  return secrets
    .map(
      (secret) =>
        `v1,${createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
          .update(`${id}.${timestamp}.${body}`)
          .digest('base64')}`,
    )
    .join(' ')
}
