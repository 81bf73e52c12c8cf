// Clients that charge and refund without pause, each operation under its own Idempotency-Key, retried with that
// same key until it settles (a 201 or a 402), as a careful integrator's client does; a few give up after a lost
// answer, as a crashed client would. What they saw is kept for
// the test to hold the books against: every acknowledged outcome, every status code with its Retry-After.
import { randomUUID } from 'node:crypto'

export interface Acknowledged {
  kind: 'charge' | 'refund'
  key: string
  status: 201 | 402
  /** The charge's or the refund's id. */
  id: string
  /** When the attempt that got the outcome was sent, and when its answer came. */
  sentAt: number
  at: number
}

export interface Answer {
  status: number
  retryAfter: string | null
  at: number
}

export interface PaymentLoad {
  acknowledged: Acknowledged[]
  /**
   * Keys of charges whose client gave up after a lost answer (a 503), as a crashed client does: the recovery worker
   * must settle them.
   */
  abandoned: string[]
  answers: Answer[]
  /** Requests that got no HTTP answer (a connection refused or cut, a timeout); retried all the same. */
  unanswered: number
  /** Stops starting new operations and waits for the ones under way to settle. */
  stop(): Promise<void>
}

const SOURCES = [
  'pm_card_visa',
  'pm_card_visa',
  'pm_card_visa',
  'pm_card_mastercard',
  'pm_card_chargeDeclined',
  'pm_card_responseLost',
]

/** `fetch` may be one that checks each response (contractFetch). */
export function startPaymentLoad(
  baseUrl: string,
  apiKey: string,
  clients: number,
  fetch: typeof globalThis.fetch = globalThis.fetch,
): PaymentLoad {
  const load: PaymentLoad = { acknowledged: [], abandoned: [], answers: [], unanswered: 0, stop: async () => {} }
  let stopping = false

  // One logical operation: the same key and body until the server gives an outcome, or the first 503 if `abandon`.
  const settle = async (
    kind: Acknowledged['kind'],
    path: string,
    body: object,
    key = randomUUID(),
    abandon = false,
  ): Promise<Acknowledged | undefined> => {
    for (;;) {
      let response: Response
      const sentAt = Date.now()
      try {
        response = await fetch(`${baseUrl}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(15_000),
        })
      } catch {
        load.unanswered++
        await sleep(200)
        continue
      }
      const text = await response.text()
      load.answers.push({ status: response.status, retryAfter: response.headers.get('retry-after'), at: Date.now() })
      if (response.status === 201 || response.status === 402) {
        const parsed = JSON.parse(text) as { id?: string; charge?: string }
        const acknowledged = {
          kind,
          key,
          status: response.status,
          id: (response.status === 201 ? parsed.id : parsed.charge)!,
          sentAt,
          at: Date.now(),
        } as Acknowledged
        load.acknowledged.push(acknowledged)
        return acknowledged
      }
      if (response.status !== 409 && response.status !== 503)
        throw new Error(`${kind} ${key}: unexpected ${response.status} ${text}`)
      if (abandon && response.status === 503) return void load.abandoned.push(key)
      // Retry-After in seconds; a second at most, so that the test keeps moving.
      await sleep(Math.min(Number(response.headers.get('retry-after') ?? 1), 1) * 1000)
    }
  }

  const client = async () => {
    while (!stopping) {
      const source = SOURCES[Math.floor(Math.random() * SOURCES.length)]!
      const amount = 500 + Math.floor(Math.random() * 5000)
      const key = randomUUID()
      const abandon = source === 'pm_card_responseLost' && Math.random() < 0.5
      const charge = await settle(
        'charge',
        '/v1/charges',
        { amount_cents: amount, currency: 'usd', source, metadata: { key } },
        key,
        abandon,
      )
      if (charge?.status === 201 && Math.random() < 0.5)
        await settle('refund', `/v1/charges/${charge.id}/refunds`, { amount_cents: Math.floor(amount / 2) })
    }
  }
  const running = Array.from({ length: clients }, client)
  const failures: unknown[] = []
  const settled = Promise.all(running.map((work) => work.catch((error: unknown) => void failures.push(error))))
  load.stop = async () => {
    stopping = true
    await settled
    if (failures.length) throw new AggregateError(failures, `${failures.length} client(s) failed`)
  }
  return load
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
