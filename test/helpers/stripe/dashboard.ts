// Stripe's Dashboard, played against the test server: what is done there goes through Stripe's own API under no key
// of the service's (a payment made outside the service, a capture or a cancel of one of its payments). The SDK's
// retries are off, so that a fault a test sets applies to the one request it names.
import Stripe from 'stripe'
import type { StripeTestServer } from './server.js'

export function dashboardOf(server: Pick<StripeTestServer, 'secretKey' | 'url'>): Stripe {
  return new Stripe(server.secretKey, {
    host: '127.0.0.1',
    port: Number(new URL(server.url).port),
    protocol: 'http',
    maxNetworkRetries: 0,
  })
}
