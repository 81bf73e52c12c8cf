// POST /processor/webhooks: the payment processor's own webhooks (Stripe's, for PROCESSOR=stripe), the way outcomes
// that come after an answer arrive. Not authenticated by an API key: by the processor's signature over the raw bytes
// (src/processor/stripe/later-outcomes.ts), so this route reads the body as bytes, unparsed. It answers 200 only once
// the event is recorded (src/processor-events/inbox.ts): anything else, and the processor delivers it again.
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { acceptEvent, withCapturedFunds } from '../processor-events/inbox.js'
import type { LaterSettings } from '../processor-events/apply.js'
import type { Sql } from '../db/connect.js'
import { type LaterOutcomes, WebhookRefusedError } from '../processor/later-outcomes.js'
import { ProcessorUnavailableError } from '../processor/processor.js'
import { Problem } from '../problems.js'

/** Stripe's events are small, but a PaymentIntent with 50 metadata pairs of 500 characters is not. */
const WEBHOOK_BODY_LIMIT = 1024 * 1024

const Received = Type.Object(
  {
    received: Type.Literal(true),
    status: Type.Enum(['applied', 'waiting', 'ignored', 'duplicate'], {
      description:
        '`applied`: the books changed; `waiting`: its object is not in the books yet (it is applied once it is); ' +
        '`ignored`: nothing for the books (another type, or an object this service did not make); `duplicate`: ' +
        'received before.',
    }),
  },
  { title: 'ProcessorWebhookReceived' },
)

export default async function processorWebhookRoutes(
  app: FastifyInstance,
  options: { sql: Sql; later: LaterOutcomes; settings: LaterSettings },
) {
  const { sql, later, settings } = options
  // The signature is over the bytes as sent: they are kept as they are (this context only).
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body))

  app.post(
    '/processor/webhooks',
    {
      bodyLimit: WEBHOOK_BODY_LIMIT,
      config: {
        openapi: {
          operationId: 'receiveProcessorWebhook',
          tag: 'Processor',
          summary: 'Receive the payment processor’s webhook',
          public: true,
          rawBody: {
            description:
              'The processor’s event, as it signed it: read as bytes, verified, then parsed (with Stripe: an Event ' +
              'object).',
            headers: {
              'Stripe-Signature':
                'With PROCESSOR=stripe: `t=<unix time>,v1=<HMAC-SHA256 of "t.body" with the endpoint’s signing ' +
                'secret>`.',
            },
          },
          responses: {
            200: {
              description: 'The event is recorded (and applied, if its object is in the books).',
              schema: Received,
            },
          },
          problems: [
            'webhook-signature-invalid',
            'processor-sends-no-webhooks',
            'body-too-large',
            'service-unavailable',
          ],
        },
      },
    },
    async (request) => {
      if (!later.receive)
        throw new Problem(
          'processor-sends-no-webhooks',
          `The ${later.name} processor sends no webhooks: its events are read from its list.`,
        )
      const received = later.receive(request.body as Buffer, request.headers)
      // A payment captured at the processor: what it kept is read from it (src/processor-events/inbox.ts).
      const event = await received
        .then((told) => withCapturedFunds(sql, later, told))
        .catch((error: unknown) => {
          if (error instanceof WebhookRefusedError)
            throw new Problem('webhook-signature-invalid', `Not applied: ${error.message}`)
          // Reading it needed the processor (a charge.refunded lists its refunds, a payment captured there its fee),
          // which did not answer: sent again.
          if (error instanceof ProcessorUnavailableError) {
            throw new Problem(
              'service-unavailable',
              'Reading this event needed the processor, which did not answer; nothing was recorded.',
              { headers: { 'retry-after': '5' } },
            )
          }
          throw error
        })
      request.log.info({ processor_event: event.id, type: event.type }, 'processor webhook received')
      return { received: true as const, status: await acceptEvent(sql, event, 'webhook', settings) }
    },
  )
}
