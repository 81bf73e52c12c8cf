// Verifying a webhook delivery before trusting it: its Standard Webhooks signature (any one of the signatures in
// the header matches, so a secret rotation goes unnoticed) and its timestamp (within five minutes, so an old
// delivery cannot be replayed), with the `standardwebhooks` package.
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import type { Event } from './types.js'

export { WebhookVerificationError }

/**
 * The event a delivery carries, once verified; throws WebhookVerificationError if it is not. `body` must be the
 * bytes as received (a re-serialised parse would not match the signature). Apply each `webhook-id` once: a
 * delivery may come again.
 */
export function verifyWebhook(
  body: string | Uint8Array,
  headers: Headers | Record<string, string | string[] | undefined>,
  secret: string,
): Event {
  const read = (name: string) => (headers instanceof Headers ? headers.get(name) : [headers[name]].flat()[0]) ?? ''
  const signed = {
    'webhook-id': read('webhook-id'),
    'webhook-timestamp': read('webhook-timestamp'),
    'webhook-signature': read('webhook-signature'),
  }
  return new Webhook(secret).verify(typeof body === 'string' ? body : new TextDecoder().decode(body), signed) as Event
}
