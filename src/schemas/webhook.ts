// Events, webhook endpoints and deliveries: the resources and the bodies that create and change them.
import { Type, type Static } from 'typebox'
import { Charge } from './charge.js'
import { Timestamp } from './common.js'
import { Refund } from './refund.js'
import { PageQuery } from './page.js'

export const EVENT_TYPES = ['charge.succeeded', 'charge.authorized', 'charge.failed', 'charge.captured', 'charge.voided', 'charge.expired', 'charge.refunded'] as const

export const EventId = Type.String({ pattern: '^evt_[0-9a-f]{24}$' })
export type EventType = (typeof EVENT_TYPES)[number]

export const Event = Type.Object({
  id: EventId,
  object: Type.Literal('event'),
  type: Type.Enum([...EVENT_TYPES]),
  created_at: Timestamp,
  /** The charge as the API returned it at that moment; charge.refunded also carries the refund. */
  data: Type.Object({ object: Charge, refund: Type.Optional(Refund) }),
})
export type Event = Static<typeof Event>
export const WebhookEndpointId = Type.String({ pattern: '^we_[0-9a-f]{24}$' })
export const EventParams = Type.Object({ id: EventId })
export const WebhookEndpointParams = Type.Object({ id: WebhookEndpointId })

export const ListEventsQuery = Type.Object(
  {
    ...PageQuery(EventId),
    type: Type.Optional(Type.Enum([...EVENT_TYPES])),
  },
  { additionalProperties: false },
)

export const RedeliverBody = Type.Object({ endpoint_id: Type.Optional(WebhookEndpointId) }, { additionalProperties: false })

const EnabledEvents = Type.Array(Type.Enum(['*', ...EVENT_TYPES]), { minItems: 1, maxItems: 50, uniqueItems: true })

export const CreateWebhookEndpointBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    enabled_events: EnabledEvents,
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
)
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>

export const UpdateWebhookEndpointBody = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    enabled_events: Type.Optional(EnabledEvents),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    /** true: stop sending to it; false: send again (deliveries from while it was disabled are not sent). */
    disabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateWebhookEndpointBody = Static<typeof UpdateWebhookEndpointBody>

export const ListWebhookEndpointsQuery = Type.Object(PageQuery(WebhookEndpointId), { additionalProperties: false })
/** An endpoint's deliveries, newest first. */
export const ListDeliveriesQuery = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) }, { additionalProperties: false })

export const WebhookEndpoint = Type.Object({
  id: WebhookEndpointId,
  object: Type.Literal('webhook_endpoint'),
  url: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  enabled_events: Type.Array(Type.String()),
  status: Type.Enum(['enabled', 'disabled']),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  /** Only in the responses that create or rotate it: whsec_... */
  secret: Type.Optional(Type.String()),
})
export type WebhookEndpoint = Static<typeof WebhookEndpoint>

export const DeliveryAttempt = Type.Object({
  attempted_at: Timestamp,
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  duration_ms: Type.Integer(),
  /** The first 1,000 characters of the response. */
  response_excerpt: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
})
export type DeliveryAttempt = Static<typeof DeliveryAttempt>

export const WebhookDelivery = Type.Object({
  id: Type.String({ pattern: '^wd_[0-9a-f]{24}$' }),
  object: Type.Literal('webhook_delivery'),
  event: EventId,
  endpoint: WebhookEndpointId,
  status: Type.Enum(['pending', 'delivered', 'failed']),
  attempts: Type.Array(DeliveryAttempt),
  next_attempt_at: Type.Union([Timestamp, Type.Null()]),
  delivered_at: Type.Union([Timestamp, Type.Null()]),
  created_at: Timestamp,
})
export type WebhookDelivery = Static<typeof WebhookDelivery>
