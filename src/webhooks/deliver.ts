// The webhook sender: the queue worker that calls someone else's API, in brandur's phases.
//   1. claim: take the delivery for one attempt (a lease, so a dead sender's delivery is picked up again)
//   2. call out: POST the event's fixed bytes, signed, with a timeout (no transaction open), to the address that
//      was checked (src/webhooks/send.ts)
//   3. record: the attempt, and the delivery delivered, failed, or due again, in one transaction
// webhook-id is the event id on every attempt and redelivery, so a receiver can apply each event once.
import type { Logger } from 'pino'
import { parseRetryAfter } from '../client/retry.js'
import type { Sql } from '../db/connect.js'
import {
  claimDelivery,
  failUnsendable,
  recordAttempt,
  wake,
  type AttemptResult,
  type ClaimedDelivery,
} from './deliveries.js'
import { disableGoneEndpoint } from './endpoints.js'
import { signatureHeader } from './signature.js'
import { DeliveryTimeoutError, sendToTarget } from './send.js'
import { webhookTarget, type Resolver } from './urls.js'

export interface DeliverySettings {
  timeoutMs: number
  /** The wait after each failed attempt; after the last, the delivery fails. */
  retryScheduleMs: number[]
  allowPrivateUrls: boolean
  /** How host names are resolved; the system's resolver unless a test gives its own. */
  resolve?: Resolver
}

const EXCERPT_CHARS = 1000
const MAX_RETRY_AFTER_MS = 24 * 3600 * 1000

/**
 * One job: the delivery it was woken for, then, for `handOver.ms`, the endpoint's next due deliveries,
 * each handed over in the transaction that records the one before (src/webhooks/deliveries.ts releaseEndpoint):
 * a backlog to one endpoint (after an outage, say) drains at the pace of its attempts, not of job wake-ups.
 * Returns what became of the last delivery it attempted.
 */
export async function deliverWebhook(
  sql: Sql,
  deliveryId: string,
  settings: DeliverySettings,
  log: Logger,
  handOver: { ms: number; signal?: AbortSignal } = { ms: 0 },
): Promise<'delivered' | 'retrying' | 'failed' | 'skipped'> {
  const leaseSeconds = Math.ceil(settings.timeoutMs / 1000) + 5
  const claimed = await claimDelivery(sql, deliveryId, leaseSeconds)
  if (!claimed) return 'skipped'
  // The endpoint is busy with another delivery: come back when its attempt is over at the latest (it wakes the
  // next one itself when it ends sooner).
  if ('busyUntil' in claimed) {
    await wake(sql, deliveryId, claimed.busyUntil)
    return 'skipped'
  }
  const handOverUntil = Date.now() + handOver.ms
  let delivery: ClaimedDelivery = claimed
  for (;;) {
    if (delivery.endpointStatus !== 'enabled') {
      await failUnsendable(sql, delivery, 'the endpoint is disabled')
      return 'failed'
    }
    const { result, retryAfterMs } = await attempt(delivery, settings)
    const next = nextStep(result, retryAfterMs, delivery.attempt, settings)
    // Not after a 410, which disables the endpoint in the same transaction: the next one fails as unsendable.
    const handOverSeconds =
      Date.now() < handOverUntil && !handOver.signal?.aborted && result.status_code !== 410 ? leaseSeconds : undefined
    const attempted = delivery
    const recorded = await sql.begin(async (tx) => {
      const outcome = await recordAttempt(tx, attempted, result, next, handOverSeconds)
      if (outcome.recorded && result.status_code === 410) await disableGoneEndpoint(tx, attempted.endpointId)
      return outcome
    })
    if (!recorded.recorded) {
      log.info(
        { delivery: delivery.id, event: delivery.eventId, attempt: delivery.attempt },
        'webhook attempt not recorded: its endpoint was deleted meanwhile',
      )
      return 'skipped'
    }
    log.info(
      {
        delivery: delivery.id,
        event: delivery.eventId,
        attempt: delivery.attempt,
        status_code: result.status_code,
        error: result.error,
        next: next.status,
      },
      'webhook attempt',
    )
    if (!recorded.handedOver) return next.status === 'pending' ? 'retrying' : next.status
    delivery = recorded.handedOver
  }
}

async function attempt(
  delivery: ClaimedDelivery,
  settings: DeliverySettings,
): Promise<{ result: AttemptResult; retryAfterMs?: number }> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  // Resolved and checked once; the request goes to that address (DNS may answer otherwise a moment later).
  const target = await webhookTarget(delivery.url, settings.allowPrivateUrls, settings.resolve)
  if ('problem' in target)
    return {
      result: {
        status_code: null,
        duration_ms: elapsed(),
        response_excerpt: null,
        error: `not sent: the URL ${target.problem}`,
      },
    }
  const timestamp = Math.floor(Date.now() / 1000)
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'payments-api-webhooks/1',
    'webhook-id': delivery.eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader(delivery.secrets, delivery.eventId, timestamp, delivery.body),
  }
  try {
    const sent = await sendToTarget(target, headers, delivery.body, {
      timeoutMs: settings.timeoutMs,
      excerptChars: EXCERPT_CHARS,
    })
    return {
      result: { status_code: sent.status, duration_ms: elapsed(), response_excerpt: sent.excerpt, error: null },
      retryAfterMs: sent.status === 429 || sent.status === 503 ? parseRetryAfter(sent.retryAfter) : undefined,
    }
  } catch (error) {
    const timedOut = error instanceof DeliveryTimeoutError
    const cause = (error as { code?: string }).code
    return {
      result: {
        status_code: null,
        duration_ms: elapsed(),
        response_excerpt: null,
        error: timedOut ? `timed out after ${settings.timeoutMs} ms` : `network error${cause ? `: ${cause}` : ''}`,
      },
    }
  }
}

function nextStep(
  result: AttemptResult,
  retryAfterMs: number | undefined,
  attempt: number,
  settings: DeliverySettings,
) {
  const status = result.status_code
  if (status !== null && status >= 200 && status < 300) return { status: 'delivered' as const }
  const wait = settings.retryScheduleMs[attempt - 1]
  if (status === 410 || wait === undefined) return { status: 'failed' as const }
  // Jitter of +-10% keeps a crowd of failed deliveries from coming back at the same instant.
  const jittered = wait * (0.9 + Math.random() * 0.2)
  return {
    status: 'pending' as const,
    retryAt: new Date(Date.now() + Math.max(jittered, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS))),
  }
}
