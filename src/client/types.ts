// The client's types: the components of openapi.yaml, generated into ./api.ts from the TypeBox schemas the server
// validates with (one source of truth), and the names this client published before they were generated.
import type {
  CaptureCharge,
  CreateCharge,
  CreateRefund,
  CreateWebhookEndpoint,
  ListWebhookDeliveriesQuery,
  RedeliverRequest,
  UpdateWebhookEndpoint,
} from './api.js'

export type * from './api.js'
export type CreateChargeBody = CreateCharge
export type CaptureChargeBody = CaptureCharge
export type CreateRefundBody = CreateRefund
export type RedeliverBody = RedeliverRequest
export type CreateWebhookEndpointBody = CreateWebhookEndpoint
export type UpdateWebhookEndpointBody = UpdateWebhookEndpoint
export type ListDeliveriesQuery = ListWebhookDeliveriesQuery

/** A page of a list, newest first. */
export interface List<T> {
  object: 'list'
  data: T[]
  has_more: boolean
}
