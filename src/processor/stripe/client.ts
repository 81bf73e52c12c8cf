// The Stripe SDK client, made in one place from configuration: the secret key, the base URL of the API
// (STRIPE_API_URL: Stripe's own, or a Stripe-compatible server on 127.0.0.1 for tests), and an HTTP client that
// sends nothing once the call it belongs to has run out of time.
//
// Why: the SDK retries by itself (maxNetworkRetries, on no answer, 409, 5xx, Stripe-Should-Retry), and retries a
// reset connection once even with retries off (stripe-node#2816), each attempt with its own timeout. A retry
// sent after the service gave the call up (PROCESSOR_TIMEOUT_MS) could reach Stripe after the recovery worker
// concluded that Stripe never saw the operation. So every call runs with a deadline (withDeadline), and each
// attempt the SDK makes is cut at that deadline and refused after it: whatever the SDK retries, nothing reaches
// Stripe after PROCESSOR_TIMEOUT_MS (but what is already on the wire).
import { AsyncLocalStorage } from 'node:async_hooks'
import Stripe from 'stripe'

const callDeadlines = new AsyncLocalStorage<number>()

/** Runs `call` (one SDK call and every retry it makes) so that nothing of it is sent after `deadline` (epoch ms). */
export function withDeadline<T>(deadline: number, call: () => Promise<T>): Promise<T> {
  return callDeadlines.run(deadline, call)
}

/** The SDK's own Node HTTP client, each attempt bounded by its call's deadline. */
class DeadlineHttpClient extends Stripe.HttpClient {
  readonly #inner = Stripe.createNodeHttpClient()

  override getClientName(): string {
    return this.#inner.getClientName()
  }

  override makeRequest(
    ...args: Parameters<Stripe.HttpClient['makeRequest']>
  ): ReturnType<Stripe.HttpClient['makeRequest']> {
    const deadline = callDeadlines.getStore()
    if (deadline !== undefined) {
      const remaining = deadline - Date.now()
      // Not retried as a reset connection would be: the SDK gives up once its retries are spent, sending nothing.
      if (remaining <= 0)
        return Promise.reject(
          Object.assign(new Error('the call ran out of time; this attempt was not sent'), { code: 'EDEADLINE' }),
        )
      // The SDK's timeout is an idle timeout on the socket, which also bounds connecting: the request is written
      // as soon as the connection opens, so it is sent before the deadline or not at all.
      args[7] = Math.min(args[7], remaining)
    }
    return this.#inner.makeRequest(...args)
  }
}

export interface StripeClientOptions {
  secretKey: string
  /** https://api.stripe.com, or a Stripe-compatible server. */
  apiUrl: string
  /** PROCESSOR_TIMEOUT_MS: no attempt of a call outlives it. */
  timeoutMs: number
}

/**
 * The client for a processor account: the platform's (null), or a connected account's (Stripe Connect), which sends
 * `Stripe-Account: acct_…` with every request it makes, list pages included (docs.stripe.com/connect/authentication).
 */
export type StripeClients = (processorAccount: string | null) => Stripe

/** One client per processor account, made when first asked for: a call can only go where its client is bound. */
export function stripeClients(options: StripeClientOptions): StripeClients {
  const clients = new Map<string | null, Stripe>()
  return (processorAccount) => {
    let client = clients.get(processorAccount)
    if (!client) {
      client = createStripeClient(options, processorAccount)
      clients.set(processorAccount, client)
    }
    return client
  }
}

export function createStripeClient(options: StripeClientOptions, processorAccount: string | null = null): Stripe {
  const url = new URL(options.apiUrl)
  const protocol = url.protocol === 'http:' ? 'http' : 'https'
  return new Stripe(options.secretKey, {
    host: url.hostname,
    port: url.port || (protocol === 'http' ? 80 : 443),
    protocol,
    timeout: options.timeoutMs,
    // The SDK's retries, with the same Idempotency-Key, inside the call's deadline: a 409 in use or a 500 asked
    // to be retried often settles within it.
    maxNetworkRetries: 2,
    httpClient: new DeadlineHttpClient(),
    telemetry: false,
    appInfo: { name: 'payments-api' },
    ...(processorAccount ? { stripeAccount: processorAccount } : {}),
  })
}
