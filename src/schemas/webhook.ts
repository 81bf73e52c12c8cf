// Events, webhook endpoints and deliveries: the resources and the bodies that create and change them.
import { Type, type Static, type TSchema } from 'typebox'
import { Charge } from './charge.js'
import { ResourceId, Text, Timestamp } from './common.js'
import { Payout } from './payout.js'
import { Refund } from './refund.js'
import { ListOf, PageLimit, PageQuery } from './page.js'

export const EventId = ResourceId('EventId')
export const WebhookEndpointId = ResourceId('WebhookEndpointId')
export const WebhookDeliveryId = ResourceId('WebhookDeliveryId')

const ChargeData = Type.Object(
  { object: Charge, refund: Type.Optional(Refund) },
  {
    description:
      '`object`: the charge as the API returned it at that moment; `charge.refund.pending`, `charge.refunded` and ' +
      '`charge.refund.failed` also carry the `refund`.',
  },
)

const PayoutData = Type.Object(
  { object: Payout },
  { description: '`object`: the payout (this account’s share of it) as the API returned it at that moment.' },
)

/**
 * Every event type, with what its `data` holds: declared once here; the events' check, the document, the client's
 * types and the webhook receiver follow from it. A resource of a fork (a withdrawal) adds its types with its own
 * data (`{ object: Withdrawal }`): `data.object` is whichever resource changed, told apart by its `object`.
 */
export const EVENT_DATA = {
  'charge.requires_action': ChargeData,
  'charge.processing': ChargeData,
  'charge.succeeded': ChargeData,
  'charge.authorized': ChargeData,
  'charge.failed': ChargeData,
  'charge.capture_pending': ChargeData,
  'charge.captured': ChargeData,
  'charge.capture_failed': ChargeData,
  'charge.void_pending': ChargeData,
  'charge.voided': ChargeData,
  'charge.void_failed': ChargeData,
  'charge.expired': ChargeData,
  'charge.refund.pending': ChargeData,
  'charge.refunded': ChargeData,
  'charge.refund.failed': ChargeData,
  'charge.dispute.created': ChargeData,
  'charge.dispute.updated': ChargeData,
  'charge.dispute.closed': ChargeData,
  'payout.created': PayoutData,
  'payout.paid': PayoutData,
  'payout.failed': PayoutData,
} as const satisfies Record<string, TSchema>

export type EventType = keyof typeof EVENT_DATA
export const EVENT_TYPES = Object.keys(EVENT_DATA) as EventType[]
export const EventTypeSchema = Type.Enum(EVENT_TYPES, { title: 'EventType' })

/** What an event of `type` carries. */
export type EventData<T extends EventType> = Static<(typeof EVENT_DATA)[T]>

/** One event: its type tells what its data holds (narrow on `type`, or on `data.object.object`). */
export type Event = {
  [T in EventType]: { id: string; object: 'event'; type: T; created_at: string; data: EventData<T> }
}[EventType]

/** The schema of Event: one member per kind of data, with the types that carry it (one object while there is one). */
const eventMembers = [...new Set(Object.values(EVENT_DATA))].map((data) =>
  Type.Object({
    id: EventId,
    object: Type.Literal('event'),
    type: Type.Enum(EVENT_TYPES.filter((type) => EVENT_DATA[type] === data)),
    created_at: Timestamp,
    data,
  }),
)
const [onlyMember] = eventMembers
export const Event: TSchema =
  onlyMember && eventMembers.length === 1
    ? { ...onlyMember, title: 'Event' }
    : Type.Union(eventMembers, { title: 'Event' })
export const EventList = ListOf(Event)

export const EventParams = Type.Object({ id: EventId })
export const WebhookEndpointParams = Type.Object({ id: WebhookEndpointId })

export const ListEventsQuery = Type.Object(
  {
    ...PageQuery(EventId),
    type: Type.Optional({ ...EventTypeSchema, description: 'Only events of this type.' }),
  },
  { additionalProperties: false },
)

export const RedeliverBody = Type.Object(
  {
    endpoint_id: Type.Optional({
      ...WebhookEndpointId,
      description: 'Only to this endpoint; left out: to every enabled endpoint the event went to.',
    }),
  },
  { title: 'RedeliverRequest', additionalProperties: false },
)

const EnabledEvents = Type.Array(Type.Union([EventTypeSchema, Type.Literal('*')]), {
  minItems: 1,
  maxItems: 50,
  uniqueItems: true,
  description: 'The event types to send, or `*` for all of them.',
})
const WebhookUrl = Text({
  format: 'uri',
  minLength: 1,
  maxLength: 2048,
  description:
    'An absolute https URL, without credentials, whose host resolves to public addresses only (`400 ' +
    'webhook-url-refused` otherwise; `http://` and private addresses only where the deployment sets ' +
    '`WEBHOOK_ALLOW_PRIVATE_URLS`).',
  examples: ['https://example.com/hooks/payments'],
})

export const CreateWebhookEndpointBody = Type.Object(
  {
    url: WebhookUrl,
    enabled_events: EnabledEvents,
    description: Type.Optional(Text({ maxLength: 500 })),
  },
  { title: 'CreateWebhookEndpoint', additionalProperties: false },
)
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>

export const UpdateWebhookEndpointBody = Type.Object(
  {
    url: Type.Optional(WebhookUrl),
    enabled_events: Type.Optional(EnabledEvents),
    description: Type.Optional(Type.Union([Text({ maxLength: 500 }), Type.Null()])),
    disabled: Type.Optional(
      Type.Boolean({
        description:
          '`true`: stop sending to it; `false`: send again (deliveries from while it was disabled are not sent).',
      }),
    ),
  },
  { title: 'UpdateWebhookEndpoint', additionalProperties: false, minProperties: 1 },
)
export type UpdateWebhookEndpointBody = Static<typeof UpdateWebhookEndpointBody>

export const ListWebhookEndpointsQuery = Type.Object(PageQuery(WebhookEndpointId), { additionalProperties: false })
export const ListDeliveriesQuery = Type.Object({ limit: Type.Optional(PageLimit) }, { additionalProperties: false })

export const WebhookEndpoint = Type.Object(
  {
    id: WebhookEndpointId,
    object: Type.Literal('webhook_endpoint'),
    url: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    enabled_events: Type.Array(Type.String()),
    status: Type.Enum(['enabled', 'disabled']),
    disabled_reason: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
    secret: Type.Optional(
      Type.String({
        pattern: '^whsec_',
        description: 'The signing secret: only when the endpoint is created or its secret rotated.',
      }),
    ),
  },
  {
    title: 'WebhookEndpoint',
    examples: [
      {
        id: 'we_9c41e0d2b7a64f1e8d3c5a20',
        object: 'webhook_endpoint',
        url: 'https://example.com/hooks/payments',
        description: 'Order fulfilment',
        enabled_events: ['charge.succeeded', 'charge.failed', 'refund.succeeded'],
        status: 'enabled',
        disabled_reason: null,
        created_at: '2026-12-04T09:00:00.000Z',
      },
    ],
  },
)
export type WebhookEndpoint = Static<typeof WebhookEndpoint>
export const WebhookEndpointList = ListOf(WebhookEndpoint)

export const DeletedWebhookEndpoint = Type.Object(
  { id: WebhookEndpointId, object: Type.Literal('webhook_endpoint'), deleted: Type.Literal(true) },
  { title: 'DeletedWebhookEndpoint' },
)

export const DeliveryAttempt = Type.Object({
  attempted_at: Timestamp,
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  duration_ms: Type.Integer(),
  response_excerpt: Type.Union([Type.String(), Type.Null()], {
    description: 'The first 1,000 characters of the response.',
  }),
  error: Type.Union([Type.String(), Type.Null()]),
})
export type DeliveryAttempt = Static<typeof DeliveryAttempt>

export const WebhookDelivery = Type.Object(
  {
    id: WebhookDeliveryId,
    object: Type.Literal('webhook_delivery'),
    event: EventId,
    endpoint: WebhookEndpointId,
    status: Type.Enum(['pending', 'delivered', 'failed']),
    attempts: Type.Array(DeliveryAttempt),
    next_attempt_at: Type.Union([Timestamp, Type.Null()]),
    delivered_at: Type.Union([Timestamp, Type.Null()]),
    created_at: Timestamp,
  },
  { title: 'WebhookDelivery' },
)
export type WebhookDelivery = Static<typeof WebhookDelivery>
export const WebhookDeliveryList = ListOf(WebhookDelivery)
