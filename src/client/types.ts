// The client's types, from the very TypeBox schemas the server validates with: one source of truth. Type imports
// only, so the client carries none of the server's code.
import type { Static } from 'typebox'
import type {
  Balance,
  BalanceTransaction,
  FeeDetail,
  ListBalanceTransactionsQuery as ListBalanceTransactionsQuerySchema,
} from '../schemas/balance.js'
import type {
  CaptureChargeBody as CaptureChargeBodySchema,
  Charge,
  CreateChargeBody,
  ListChargesQuery as ListChargesQuerySchema,
} from '../schemas/charge.js'
import type { ListPayoutsQuery as ListPayoutsQuerySchema, Payout } from '../schemas/payout.js'
import type {
  CreateRefundBody as CreateRefundBodySchema,
  ListRefundsQuery as ListRefundsQuerySchema,
  Refund,
} from '../schemas/refund.js'
import type {
  CreateWebhookEndpointBody,
  Event,
  EventType,
  ListDeliveriesQuery as ListDeliveriesQuerySchema,
  ListEventsQuery as ListEventsQuerySchema,
  ListWebhookEndpointsQuery as ListWebhookEndpointsQuerySchema,
  RedeliverBody as RedeliverBodySchema,
  UpdateWebhookEndpointBody,
  WebhookDelivery,
  WebhookEndpoint,
} from '../schemas/webhook.js'

export type {
  Balance,
  BalanceTransaction,
  Charge,
  CreateChargeBody,
  CreateWebhookEndpointBody,
  Event,
  EventType,
  FeeDetail,
  Payout,
  Refund,
  UpdateWebhookEndpointBody,
  WebhookDelivery,
  WebhookEndpoint,
}
export type CaptureChargeBody = Static<typeof CaptureChargeBodySchema>
export type CreateRefundBody = Static<typeof CreateRefundBodySchema>
export type RedeliverBody = Static<typeof RedeliverBodySchema>
export type ListChargesQuery = Omit<Static<typeof ListChargesQuerySchema>, 'idempotency_key'>
export type ListRefundsQuery = Static<typeof ListRefundsQuerySchema>
export type ListEventsQuery = Static<typeof ListEventsQuerySchema>
export type ListWebhookEndpointsQuery = Static<typeof ListWebhookEndpointsQuerySchema>
export type ListDeliveriesQuery = Static<typeof ListDeliveriesQuerySchema>
export type ListBalanceTransactionsQuery = Static<typeof ListBalanceTransactionsQuerySchema>
export type ListPayoutsQuery = Static<typeof ListPayoutsQuerySchema>

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
