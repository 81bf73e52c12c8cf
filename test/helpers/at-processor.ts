// What happens at the processor after its answers, made to happen from a test, with either processor: through the
// simulated processor's own pages and controls (as a developer would), or through the Stripe test server (whose
// events then reach the service as signed webhooks over a real socket). delivered() waits until what the processor
// told has arrived; reconcile() and compare() run what the worker's scheduled tasks run.
import { loadConfig } from '../../src/config.js'
import { chargeSettingsOf } from '../../src/processor/pricing.js'
import { expect } from 'vitest'
import { pino } from 'pino'
import type { TestContext } from './app.js'
import type { ProcessorChoice } from './processors.js'
import { STRIPE_WEBHOOK_SECRET } from './processors.js'
import { compareWithProcessor, type Comparison } from '../../src/processor-events/compare.js'
import { pullEvents, type PullResult } from '../../src/processor-events/reconcile.js'
import { retryWaitingEvents } from '../../src/processor-events/inbox.js'
import { simulatedControlsOf } from '../../src/processor/simulated.js'
import { dashboardOf } from './stripe/dashboard.js'

export const LATER_SETTINGS = chargeSettingsOf(loadConfig({}))

export interface LaterAtProcessor {
  /** The customer completes (or fails) the authentication at the page the charge's next_action names. */
  authenticate(nextActionUrl: string, succeeded: boolean): Promise<void>
  settle(reference: string): Promise<void>
  /** The bank debit settles, and the processor's news of it never reaches the service (only its list has it). */
  settleUntold(reference: string): Promise<void>
  dispute(reference: string): Promise<void>
  closeDispute(reference: string, outcome: 'won' | 'lost'): Promise<void>
  refund(reference: string, amountCents?: number): Promise<void>
  expire(reference: string): Promise<void>
  /** Canceled in the processor's dashboard: a payment not decided yet, or an authorization (a void there). */
  cancel(reference: string): Promise<void>
  /** The same moves, whose news never reaches the service: only the processor's list has it. */
  untold: Record<'cancel' | 'expire' | 'settle', (reference: string) => Promise<void>> & {
    authenticate(reference: string, succeeded: boolean): Promise<void>
  }
  /** The processor's payout schedule, on cue: a payout of what is available by `availableBy`; its reference. */
  payOut(availableBy: Date): Promise<string>
  /** The payout arrives at the bank, or fails. */
  settlePayout(reference: string, outcome: 'paid' | 'failed'): Promise<void>
  /**
   * What the processor told has arrived: its webhooks are delivered, and those that overtook the answer they follow
   * applied again (Stripe); its list is read (simulated).
   */
  delivered(): Promise<void>
  reconcile(): Promise<PullResult>
  compare(): Promise<Comparison>
}

export async function laterAt(
  name: 'simulated' | 'stripe',
  context: TestContext,
  choice: ProcessorChoice,
): Promise<LaterAtProcessor> {
  const log = pino({ level: 'silent' })
  const reconcile = () => pullEvents(context.sql, context.processor.later, context.chargeSettings, log)
  const compare = () => compareWithProcessor(context.sql, context.processor.later, log, { settleMarginMs: 0 })
  if (name === 'simulated') {
    const control = async (path: string, body: unknown = {}) => {
      const response = await context.app.inject({
        method: 'POST',
        url: `/simulated-processor${path}`,
        payload: body as object,
      })
      expect(response.statusCode, response.body).toBe(200)
    }
    const controls = simulatedControlsOf(context.processor)!
    return {
      async authenticate(url, succeeded) {
        const response = await context.app.inject({
          method: 'POST',
          url: new URL(url).pathname,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: `result=${succeeded ? 'succeeded' : 'failed'}`,
        })
        expect([200, 303], response.body).toContain(response.statusCode)
      },
      settle: (reference) => control(`/payments/${reference}/settle`),
      settleUntold: async (reference) => void (await controls.settle(reference)),
      dispute: (reference) => control(`/payments/${reference}/dispute`),
      closeDispute: (reference, outcome) => control(`/payments/${reference}/dispute/close`, { outcome }),
      refund: (reference, amountCents) =>
        control(`/payments/${reference}/refund`, amountCents === undefined ? {} : { amount_cents: amountCents }),
      expire: (reference) => control(`/payments/${reference}/expire`),
      cancel: (reference) => control(`/payments/${reference}/cancel`),
      async payOut(availableBy) {
        const response = await context.app.inject({
          method: 'POST',
          url: '/simulated-processor/payouts',
          payload: { available_by: availableBy.toISOString() },
        })
        expect(response.statusCode, response.body).toBe(200)
        return response.json().changes[0].reference
      },
      settlePayout: (reference, outcome) => control(`/payouts/${reference}/${outcome}`),
      untold: {
        authenticate: async (reference, succeeded) => void (await controls.authenticate(reference, succeeded)),
        settle: async (reference) => void (await controls.settle(reference)),
        cancel: async (reference) => void (await controls.cancel(reference)),
        expire: async (reference) => void (await controls.expire(reference)),
      },
      // Events it made by itself (a dispute of pm_card_createDispute, a refund of pm_card_refundFail failing) are
      // only in its list.
      delivered: async () => void (await reconcile()),
      reconcile,
      compare,
    }
  }
  const server = choice.stripe()
  const url = await context.app.listen({ port: 0, host: '127.0.0.1' })
  server.webhooks.endpoint(`${url}/processor/webhooks`, STRIPE_WEBHOOK_SECRET)
  const delivered = async () => {
    await server.webhooks.idle()
    // A webhook that overtook the answer it follows waits for its charge: the scheduled reconciliation applies it
    // again; here, at once.
    await retryWaitingEvents(context.sql, LATER_SETTINGS, { later: context.processor.later })
  }
  const then = async (act: () => unknown) => {
    await act()
    await delivered()
  }
  /** Every webhook of what `act` makes Stripe do is dropped: only its events list has it. */
  const untold = async (act: () => unknown) => {
    server.webhooks.fault(/./, 'drop', Number.POSITIVE_INFINITY)
    try {
      await act()
    } finally {
      server.webhooks.clearFaults()
    }
  }
  const dashboard = dashboardOf(server)
  return {
    async authenticate(nextActionUrl, succeeded) {
      const response = await fetch(nextActionUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `result=${succeeded ? 'succeeded' : 'failed'}`,
        redirect: 'manual',
      })
      expect([200, 303], await response.text()).toContain(response.status)
      await delivered()
    },
    settle: (reference) => then(() => server.later.settle(reference)),
    settleUntold: (reference) => untold(() => server.later.settle(reference)),
    dispute: (reference) => then(() => server.later.dispute(reference)),
    closeDispute: (reference, outcome) => then(() => server.later.closeDispute(reference, outcome)),
    refund: (reference, amountCents) => then(() => server.later.refundFromDashboard(reference, amountCents)),
    expire: (reference) => then(() => server.later.expireAuthorization(reference)),
    cancel: (reference) => then(() => dashboard.paymentIntents.cancel(reference)),
    async payOut(availableBy) {
      const payout = server.later.payOut({ availableBy })
      expect(payout, 'a payout of something').toBeDefined()
      await delivered()
      return payout!.id
    },
    settlePayout: (reference, outcome) => then(() => server.later.settlePayout(reference, outcome)),
    untold: {
      authenticate: (reference, succeeded) => untold(() => server.later.authenticate(reference, succeeded)),
      settle: (reference) => untold(() => server.later.settle(reference)),
      cancel: (reference) => untold(() => dashboard.paymentIntents.cancel(reference)),
      expire: (reference) => untold(() => server.later.expireAuthorization(reference)),
    },
    delivered,
    reconcile,
    compare,
  }
}
