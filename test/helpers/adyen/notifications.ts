// Adyen's standard webhooks, as docs.adyen.com/development-resources/webhooks and the Webhooks-v1 specification
// (Adyen/adyen-openapi) describe them: a POST of JSON {live, notificationItems: [{NotificationRequestItem}]}, each
// item signed in additionalData.hmacSignature (docs.adyen.com/development-resources/webhooks/verify-hmac-signatures:
// HMAC-SHA256, under the hex-decoded key, of pspReference, originalReference, merchantAccountCode,
// merchantReference, value, currency, eventCode and success joined by ':', missing ones empty; base64). Adyen counts
// an item delivered only when the answer is 2xx with the body `[accepted]`, and otherwise sends the batch again
// (here with a shortened backoff). On cue a notification is dropped for good, sent twice, held back and released in
// reverse order or in one batch, all at the same instant.
import { createHmac } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'

export interface NotificationItem {
  eventCode: string
  success: 'true' | 'false'
  pspReference: string
  originalReference?: string
  merchantAccountCode: string
  merchantReference: string
  amount: { value: number; currency: string }
  eventDate: string
  paymentMethod?: string
  reason?: string
  operations?: string[]
  additionalData?: Record<string, string>
}

export type NotificationFault =
  /** Never delivered: the endpoint was down for as long as Adyen retries. */
  | 'drop'
  /** Delivered twice, as two batches. */
  | 'duplicate'
  /** Held until release(). */
  | 'hold'

export interface NotificationDelivery {
  items: { eventCode: string; pspReference: string }[]
  attempt: number
  /** The status, and whether the body was `[accepted]`; 'error' when no answer came. */
  status: number | 'error'
  accepted: boolean
}

export interface NotificationSender {
  /** Where to send and the HMAC key (hex) to sign with; unset: nothing is sent. */
  endpoint(url: string, hmacKey: string, credentials?: { username: string; password: string }): void
  /** A new key signs from now on (Adyen's Customer Area: generate a new HMAC key). */
  rotateKey(hmacKey: string): void
  /** Applies `fault` to the next `times` notifications whose event code matches. */
  fault(eventCode: RegExp, fault: NotificationFault, times?: number): void
  clearFaults(): void
  /**
   * Delivers what was held, all at the same instant: each in a batch of its own, newest first ('reverse', the
   * default), or all in one batch ('batch').
   */
  release(order?: 'reverse' | 'batch'): void
  /** The signature Adyen puts on `item` under `hmacKey` (the current key by default), for tests that forge. */
  sign(item: NotificationItem, hmacKey?: string): string
  /** POSTs a batch as it is, unsigned items included; resolves with the status and body. */
  post(items: NotificationItem[]): Promise<{ status: number; body: string }>
  readonly deliveries: NotificationDelivery[]
  /** Every notification made, delivered or not, in order. */
  readonly sent: NotificationItem[]
  idle(): Promise<void>
}

const RETRY_DELAYS_MS = [50, 100, 200, 400, 800, 1600, 3200]

/** The string Adyen signs for a notification item. */
export function signedData(item: NotificationItem): string {
  return [
    item.pspReference,
    item.originalReference ?? '',
    item.merchantAccountCode,
    item.merchantReference,
    item.amount.value,
    item.amount.currency,
    item.eventCode,
    item.success,
  ].join(':')
}

export function notificationSender(): NotificationSender & { send(item: NotificationItem): void } {
  let target: { url: string; hmacKey: string; authorization?: string } | undefined
  const faults: { eventCode: RegExp; fault: NotificationFault; times: number }[] = []
  const held: NotificationItem[] = []
  const deliveries: NotificationDelivery[] = []
  const sent: NotificationItem[] = []
  const inFlight = new Set<Promise<void>>()

  const sign = (item: NotificationItem, hmacKey = target?.hmacKey ?? '') =>
    createHmac('sha256', Buffer.from(hmacKey, 'hex')).update(signedData(item)).digest('base64')
  const signed = (item: NotificationItem): NotificationItem => ({
    ...item,
    additionalData: { ...item.additionalData, hmacSignature: sign(item) },
  })

  async function post(items: NotificationItem[]): Promise<{ status: number; body: string }> {
    const body = JSON.stringify({
      live: 'false',
      notificationItems: items.map((item) => ({ NotificationRequestItem: item })),
    })
    const response = await fetch(target!.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(target!.authorization ? { authorization: target!.authorization } : {}),
      },
      body,
    })
    return { status: response.status, body: await response.text() }
  }

  /** Until the answer is 2xx `[accepted]`, with Adyen's retries (shortened). */
  function deliver(items: NotificationItem[]): void {
    const batch = items.map(signed)
    const run = (async () => {
      for (let attempt = 1; attempt <= RETRY_DELAYS_MS.length + 1; attempt++) {
        const delivery: NotificationDelivery = {
          items: batch.map(({ eventCode, pspReference }) => ({ eventCode, pspReference })),
          attempt,
          status: 'error',
          accepted: false,
        }
        try {
          const answer = await post(batch)
          delivery.status = answer.status
          delivery.accepted = answer.status >= 200 && answer.status < 300 && answer.body.trim() === '[accepted]'
        } catch {
          // no answer: sent again
        }
        deliveries.push(delivery)
        if (delivery.accepted) return
        if (attempt <= RETRY_DELAYS_MS.length) await sleep(RETRY_DELAYS_MS[attempt - 1])
      }
    })()
    inFlight.add(run)
    void run.finally(() => inFlight.delete(run))
  }

  return {
    endpoint: (url, hmacKey, credentials) => {
      const authorization =
        credentials && `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`
      target = { url, hmacKey, authorization }
    },
    rotateKey: (hmacKey) => {
      if (target) target.hmacKey = hmacKey
    },
    fault: (eventCode, fault, times = 1) => void faults.push({ eventCode, fault, times }),
    clearFaults: () => void faults.splice(0),
    send(item) {
      sent.push(item)
      if (!target) return
      const rule = faults.find((candidate) => candidate.eventCode.test(item.eventCode))
      if (rule && --rule.times === 0) faults.splice(faults.indexOf(rule), 1)
      if (rule?.fault === 'drop') return
      if (rule?.fault === 'hold') return void held.push(item)
      deliver([item])
      if (rule?.fault === 'duplicate') deliver([item])
    },
    release: (order = 'reverse') => {
      const items = held.splice(0)
      if (order === 'batch') return void (items.length && deliver(items))
      for (const item of items.reverse()) deliver([item])
    },
    sign,
    post: (items) => post(items),
    deliveries,
    sent,
    async idle() {
      while (inFlight.size) await Promise.all([...inFlight])
    },
  }
}
