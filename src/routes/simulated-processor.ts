// The simulated processor's own pages, served by the service only when PROCESSOR=simulated, as Stripe serves its
// 3-D Secure page and its Dashboard: where a customer authenticates (next_action.url), and the controls a developer
// uses to make later outcomes happen (a bank debit settles, an authorization lapses, a refund is made at the
// processor, a dispute opens or closes, the processor pays out and the payout arrives or fails). Each control's
// event is delivered at once, as a webhook would be; the reconciliation would find it in the processor's list
// anyway. Not part of the API (not in openapi.yaml), and not authenticated: they stand for the processor, not for an
// account.
import type { FastifyInstance } from 'fastify'
import type { Sql } from '../db/connect.js'
import type { LaterSettings } from '../processor-events/apply.js'
import { acceptEvent } from '../processor-events/inbox.js'
import type { ProcessorEvent } from '../processor/later-outcomes.js'
import { SimulatedControlError } from '../processor/simulated-later-outcomes.js'
import type { SimulatedControls } from '../processor/simulated.js'

export const SIMULATED_PREFIX = '/simulated-processor'

type Params = { reference: string }

export default async function simulatedProcessorRoutes(
  app: FastifyInstance,
  options: { sql: Sql; controls: SimulatedControls; settings: LaterSettings },
) {
  const { sql, controls, settings } = options
  // The authentication page posts a form; the controls take JSON or nothing.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
    done(null, Object.fromEntries(new URLSearchParams(body as string))),
  )

  /** Runs a control, delivers its event, and answers what it did (409 when the payment is in no state for it). */
  async function control(act: () => Promise<ProcessorEvent>) {
    const event = await act().catch((error: unknown) => {
      // A 4xx error the error handler answers as a problem with this message.
      throw error instanceof SimulatedControlError
        ? Object.assign(new Error(error.message), { statusCode: 409 })
        : error
    })
    const status = await acceptEvent(sql, event, 'webhook', settings)
    return { event: event.id, type: event.type, delivered: status, changes: event.changes }
  }

  app.get<{ Params: Params }>(`${SIMULATED_PREFIX}/authenticate/:reference`, async (request, reply) => {
    const payment = await controls.payment(request.params.reference)
    if (!payment) throw Object.assign(new Error(`No payment ${request.params.reference}.`), { statusCode: 404 })
    return reply
      .type('text/html; charset=utf-8')
      .send(authenticationPage(request.params.reference, payment.amountCents, payment.status))
  })

  app.post<{ Params: Params; Body: { result?: string } | undefined }>(
    `${SIMULATED_PREFIX}/authenticate/:reference`,
    async (request, reply) => {
      const succeeded = request.body?.result !== 'failed'
      const done = await control(() => controls.authenticate(request.params.reference, succeeded))
      const returnUrl = await controls.returnUrl(request.params.reference)
      // A browser goes back to the merchant, as after Stripe's page; a script gets what happened.
      if (returnUrl && request.headers['content-type']?.startsWith('application/x-www-form-urlencoded'))
        return reply.redirect(returnUrl, 303)
      return done
    },
  )

  const act = (path: string, run: (reference: string, body: Record<string, unknown>) => Promise<ProcessorEvent>) =>
    app.post<{ Params: Params; Body: Record<string, unknown> | undefined }>(
      `${SIMULATED_PREFIX}/payments/:reference/${path}`,
      (request) => control(() => run(request.params.reference, request.body ?? {})),
    )
  act('settle', (reference) => controls.settle(reference))
  act('expire', (reference) => controls.expire(reference))
  act('cancel', (reference) => controls.cancel(reference))
  act('refund', (reference, body) =>
    controls.refund(reference, typeof body.amount_cents === 'number' ? body.amount_cents : undefined),
  )
  act('decide', (reference, body) => controls.decide(reference, body.result !== 'refused'))
  act('dispute', (reference) => controls.dispute(reference))
  act('dispute/close', (reference, body) => controls.closeDispute(reference, body.outcome === 'lost' ? 'lost' : 'won'))

  // The processor's payout schedule, run by hand: pays out what is available by `available_by` (now by default;
  // a later time, as an ISO 8601 string, pays out what the clock has not reached yet), in `currency` (usd).
  app.post<{ Body: { available_by?: unknown; currency?: unknown } | undefined }>(
    `${SIMULATED_PREFIX}/payouts`,
    (request) => {
      const { available_by: availableBy, currency } = request.body ?? {}
      const by = typeof availableBy === 'string' ? new Date(availableBy) : new Date()
      if (Number.isNaN(by.getTime()))
        throw Object.assign(new Error(`available_by is not a time: ${String(availableBy)}`), { statusCode: 400 })
      return control(() =>
        controls.payOut(settings.pricing, {
          currency: typeof currency === 'string' ? currency : 'usd',
          availableBy: by,
        }),
      )
    },
  )
  app.post<{ Params: Params }>(`${SIMULATED_PREFIX}/payouts/:reference/paid`, (request) =>
    control(() => controls.settlePayout(request.params.reference, 'paid')),
  )
  app.post<{ Params: Params }>(`${SIMULATED_PREFIX}/payouts/:reference/failed`, (request) =>
    control(() => controls.settlePayout(request.params.reference, 'failed')),
  )
}

function authenticationPage(reference: string, amountCents: number, status: string): string {
  const action = `${SIMULATED_PREFIX}/authenticate/${encodeURIComponent(reference)}`
  const asked = status === 'requires_action'
  const what = asked
    ? 'asks the customer to authenticate.'
    : `is ${escapeHtml(status)}: there is nothing to authenticate.`
  const button = (result: string, label: string) =>
    `<form method="post" action="${action}"><input type="hidden" name="result" value="${result}">` +
    `<button type="submit">${label}</button></form>`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Simulated 3-D Secure</title></head>
<body style="font-family: sans-serif; max-width: 32rem; margin: 3rem auto">
<h1>Simulated 3-D Secure</h1>
<p>Payment <code>${escapeHtml(reference)}</code> of ${amountCents} (minor units) ${what}</p>
${asked ? [button('succeeded', 'Complete authentication'), button('failed', 'Fail authentication')].join('\n') : ''}
</body></html>`
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
}
