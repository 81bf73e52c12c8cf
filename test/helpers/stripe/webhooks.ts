// Stripe's webhook deliveries, as docs.stripe.com/webhooks describes them: each event POSTed as JSON to the
// endpoint, signed in the Stripe-Signature header (t=<unix time>,v1=<HMAC-SHA256 of "t.body" under the
// endpoint's secret>), retried with backoff until the endpoint answers 2xx, in no guaranteed order. On cue, a
// delivery is dropped for good (the event stays in the list), sent twice, held back and released out of order,
// or sent again later (a replay, signed then or now).
import { createHmac } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type Stripe from 'stripe'
import { unixNow } from './ids.js'

export type DeliveryFault =
  /** Never delivered: the endpoint was down for as long as Stripe retries. Only the events list has it. */
  | 'drop'
  /** Delivered twice. */
  | 'duplicate'
  /** Held until release(): then the held events are delivered newest first. */
  | 'hold'

export interface Delivery {
  event: string
  type: string
  attempt: number
  status: number | 'error'
}

export interface WebhookSender {
  /** Where to send, and the secret to sign with; unset: nothing is sent (the events are still listed). */
  endpoint(url: string, secret: string): void
  /** Applies `fault` to the next `times` events whose type matches. */
  fault(type: RegExp, fault: DeliveryFault, times?: number): void
  /** Forgets the faults not applied yet. */
  clearFaults(): void
  /** Delivers what was held, newest first. */
  release(): void
  /**
   * Sends an event again, signed as at `signedAt` (unix seconds; now by default): a replay. Resolves with the status.
   */
  resend(event: Stripe.Event, signedAt?: number): Promise<number>
  /** Signs `body` as Stripe does, for tests that forge or tamper. */
  sign(body: string, signedAt?: number, secret?: string): string
  readonly deliveries: Delivery[]
  /** Resolves once nothing is being delivered. */
  idle(): Promise<void>
}

const RETRY_DELAYS_MS = [50, 100, 200, 400, 800, 1600, 3200]

export function webhookSender(): WebhookSender & { send(event: Stripe.Event): void } {
  let target: { url: string; secret: string } | undefined
  const faults: { type: RegExp; fault: DeliveryFault; times: number }[] = []
  const held: Stripe.Event[] = []
  const deliveries: Delivery[] = []
  const inFlight = new Set<Promise<void>>()

  const sign = (body: string, signedAt = unixNow(), secret = target?.secret ?? '') =>
    `t=${signedAt},v1=${createHmac('sha256', secret).update(`${signedAt}.${body}`).digest('hex')}`

  async function post(event: Stripe.Event, attempt: number, signedAt?: number): Promise<number | 'error'> {
    if (!target) return 'error'
    const body = JSON.stringify(event, null, 2)
    try {
      const response = await fetch(target.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'stripe-signature': sign(body, signedAt),
          'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
        },
        body,
      })
      await response.arrayBuffer()
      deliveries.push({ event: event.id, type: event.type, attempt, status: response.status })
      return response.status
    } catch {
      deliveries.push({ event: event.id, type: event.type, attempt, status: 'error' })
      return 'error'
    }
  }

  /** Until a 2xx, with Stripe's backoff (shortened): a 4xx or 5xx is retried alike. */
  function deliver(event: Stripe.Event): void {
    const run = (async () => {
      for (let attempt = 1; attempt <= RETRY_DELAYS_MS.length + 1; attempt++) {
        const status = await post(event, attempt)
        if (typeof status === 'number' && status >= 200 && status < 300) return
        if (attempt <= RETRY_DELAYS_MS.length) await sleep(RETRY_DELAYS_MS[attempt - 1])
      }
    })()
    inFlight.add(run)
    void run.finally(() => inFlight.delete(run))
  }

  return {
    endpoint: (url, secret) => {
      target = { url, secret }
    },
    fault: (type, fault, times = 1) => void faults.push({ type, fault, times }),
    clearFaults: () => void faults.splice(0),
    send(event) {
      if (!target) return
      const rule = faults.find((candidate) => candidate.type.test(event.type))
      if (rule && --rule.times === 0) faults.splice(faults.indexOf(rule), 1)
      if (rule?.fault === 'drop') return
      if (rule?.fault === 'hold') return void held.push(event)
      deliver(event)
      if (rule?.fault === 'duplicate') deliver(event)
    },
    release: () => {
      for (const event of held.splice(0).reverse()) deliver(event)
    },
    resend: async (event, signedAt) => {
      const status = await post(event, 0, signedAt)
      return status === 'error' ? 0 : status
    },
    sign,
    deliveries,
    async idle() {
      while (inFlight.size) await Promise.all([...inFlight])
    },
  }
}
