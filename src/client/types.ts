// The client's types, from the very TypeBox schemas the server validates with: one source of truth. Type imports
// only, so the client carries none of the server's code.
import type { Static } from 'typebox'
import type { CaptureChargeBody, Charge, CreateChargeBody, ListChargesQuery } from '../schemas/charge.js'
import type { CreateRefundBody, ListRefundsQuery, Refund } from '../schemas/refund.js'
import type {
  CreateWebhookEndpointBody,
  Event,
  EventType,
  ListDeliveriesQuery,
  ListEventsQuery,
  ListWebhookEndpointsQuery,
  RedeliverBody,
  UpdateWebhookEndpointBody,
  WebhookDelivery,
  WebhookEndpoint,
} from '../schemas/webhook.js'

export type {
  Charge,
  CreateChargeBody,
  CreateWebhookEndpointBody,
  Event,
  EventType,
  Refund,
  UpdateWebhookEndpointBody,
  WebhookDelivery,
  WebhookEndpoint,
}
export type CaptureChargeBody = Static<typeof CaptureChargeBody>
export type CreateRefundBody = Static<typeof CreateRefundBody>
export type RedeliverBody = Static<typeof RedeliverBody>
export type ListChargesQuery = Omit<Static<typeof ListChargesQuery>, 'idempotency_key'>
export type ListRefundsQuery = Static<typeof ListRefundsQuery>
export type ListEventsQuery = Static<typeof ListEventsQuery>
export type ListWebhookEndpointsQuery = Static<typeof ListWebhookEndpointsQuery>
export type ListDeliveriesQuery = Static<typeof ListDeliveriesQuery>

/** A page of a list, newest first. */
export interface List<T> {
  object: 'list'
  data: T[]
  has_more: boolean
}

export interface DeletedWebhookEndpoint {
  id: string
  object: 'webhook_endpoint'
  deleted: true
}
