// The API's resources as typed methods. Every POST carries an Idempotency-Key: the caller's, or one generated
// here, once per call, before the first attempt, so that every retry of the call is the same request.
import { idempotencyKey } from './idempotency-key.js'
import {
  createTransport,
  type ApiResponse,
  type CallOptions,
  type ClientOptions,
  type IdempotentCallOptions,
  type Transport,
} from './transport.js'
import type {
  Balance,
  BalanceTransaction,
  CaptureChargeBody,
  Charge,
  CreateChargeBody,
  CreateRefundBody,
  CreateWebhookEndpointBody,
  DeletedWebhookEndpoint,
  Event,
  List,
  ListBalanceTransactionsQuery,
  ListChargesQuery,
  ListDeliveriesQuery,
  ListEventsQuery,
  ListPayoutsQuery,
  ListRefundsQuery,
  ListWebhookEndpointsQuery,
  Payout,
  RedeliverBody,
  Refund,
  UpdateWebhookEndpointBody,
  WebhookDelivery,
  WebhookEndpoint,
} from './types.js'

export type PaymentsClient = ReturnType<typeof createClient>

export function createClient(options: ClientOptions) {
  const call = createTransport(options)
  const id = (value: string) => encodeURIComponent(value)
  const post = async <T>(path: string, body: unknown, options: IdempotentCallOptions = {}) => {
    const key =
      options.idempotencyKey === undefined ? idempotencyKey.generate() : idempotencyKey.check(options.idempotencyKey)
    return call<T>({ method: 'POST', path, body, idempotencyKey: key }, options)
  }
  const get = <T>(path: string, query?: object, options?: CallOptions) =>
    call<T>({ method: 'GET', path, query }, options)

  return {
    /** Liveness and readiness, answered once (no retries): for a monitor, a failure is the answer. */
    health: {
      live: (options?: CallOptions) =>
        get<{ status: 'ok' }>('/healthz', undefined, { retry: { maxAttempts: 1 }, ...options }),
      ready: (options?: CallOptions) =>
        get<{ status: 'ok' }>('/readyz', undefined, { retry: { maxAttempts: 1 }, ...options }),
    },
    charges: {
      /** `capture: false` authorizes only; capture or void it later. */
      create: (body: CreateChargeBody, options?: IdempotentCallOptions) => post<Charge>('/v1/charges', body, options),
      retrieve: (chargeId: string, options?: CallOptions) =>
        get<Charge>(`/v1/charges/${id(chargeId)}`, undefined, options),
      list: (query?: ListChargesQuery, options?: CallOptions) => get<List<Charge>>('/v1/charges', query, options),
      all: (query?: Omit<ListChargesQuery, 'ending_before'>, options?: CallOptions) =>
        eachItem(call, '/v1/charges', query, options) as AsyncGenerator<Charge>,
      /**
       * The charge a POST /v1/charges with this key created, if any: for a client that lost the response and its own
       * record of the id.
       */
      findByIdempotencyKey: async (key: string, options?: CallOptions) =>
        (await get<List<Charge>>('/v1/charges', { idempotency_key: key }, options)).data.data[0],
      /** All of the authorization, or `amount_cents` of it (the rest is released). */
      capture: (chargeId: string, body: CaptureChargeBody = {}, options?: IdempotentCallOptions) =>
        post<Charge>(`/v1/charges/${id(chargeId)}/capture`, body, options),
      void: (chargeId: string, options?: IdempotentCallOptions) =>
        post<Charge>(`/v1/charges/${id(chargeId)}/void`, undefined, options),
      listRefunds: (chargeId: string, query?: ListRefundsQuery, options?: CallOptions) =>
        get<List<Refund>>(`/v1/charges/${id(chargeId)}/refunds`, query, options),
    },
    refunds: {
      /** All that is left of the captured amount, or `amount_cents` of it. */
      create: (chargeId: string, body: CreateRefundBody = {}, options?: IdempotentCallOptions) =>
        post<Refund>(`/v1/charges/${id(chargeId)}/refunds`, body, options),
      retrieve: (refundId: string, options?: CallOptions) =>
        get<Refund>(`/v1/refunds/${id(refundId)}`, undefined, options),
      list: (query?: ListRefundsQuery, options?: CallOptions) => get<List<Refund>>('/v1/refunds', query, options),
      all: (query?: Omit<ListRefundsQuery, 'ending_before'>, options?: CallOptions) =>
        eachItem(call, '/v1/refunds', query, options) as AsyncGenerator<Refund>,
    },
    balance: {
      /** Available and pending, per currency. */
      retrieve: (options?: CallOptions) => get<Balance>('/v1/balance', undefined, options),
    },
    balanceTransactions: {
      retrieve: (transactionId: string, options?: CallOptions) =>
        get<BalanceTransaction>(`/v1/balance_transactions/${id(transactionId)}`, undefined, options),
      list: (query?: ListBalanceTransactionsQuery, options?: CallOptions) =>
        get<List<BalanceTransaction>>('/v1/balance_transactions', query, options),
      all: (query?: Omit<ListBalanceTransactionsQuery, 'ending_before'>, options?: CallOptions) =>
        eachItem(call, '/v1/balance_transactions', query, options) as AsyncGenerator<BalanceTransaction>,
    },
    /** The processor's payouts to the bank, each as this account's share of it. */
    payouts: {
      retrieve: (payoutId: string, options?: CallOptions) =>
        get<Payout>(`/v1/payouts/${id(payoutId)}`, undefined, options),
      list: (query?: ListPayoutsQuery, options?: CallOptions) => get<List<Payout>>('/v1/payouts', query, options),
      all: (query?: Omit<ListPayoutsQuery, 'ending_before'>, options?: CallOptions) =>
        eachItem(call, '/v1/payouts', query, options) as AsyncGenerator<Payout>,
    },
    events: {
      retrieve: (eventId: string, options?: CallOptions) => get<Event>(`/v1/events/${id(eventId)}`, undefined, options),
      list: (query?: ListEventsQuery, options?: CallOptions) => get<List<Event>>('/v1/events', query, options),
      all: (query?: Omit<ListEventsQuery, 'ending_before'>, options?: CallOptions) =>
        eachItem(call, '/v1/events', query, options) as AsyncGenerator<Event>,
      /** Sends the event again to every enabled endpoint that wants it, or to `endpoint_id` only. */
      redeliver: (eventId: string, body: RedeliverBody = {}, options?: IdempotentCallOptions) =>
        post<List<WebhookDelivery>>(`/v1/events/${id(eventId)}/redeliver`, body, options),
    },
    webhookEndpoints: {
      /** The response carries the signing secret, once. */
      create: (body: CreateWebhookEndpointBody, options?: IdempotentCallOptions) =>
        post<WebhookEndpoint>('/v1/webhook_endpoints', body, options),
      retrieve: (endpointId: string, options?: CallOptions) =>
        get<WebhookEndpoint>(`/v1/webhook_endpoints/${id(endpointId)}`, undefined, options),
      list: (query?: ListWebhookEndpointsQuery, options?: CallOptions) =>
        get<List<WebhookEndpoint>>('/v1/webhook_endpoints', query, options),
      all: (query?: Omit<ListWebhookEndpointsQuery, 'ending_before'>, options?: CallOptions) =>
        eachItem(call, '/v1/webhook_endpoints', query, options) as AsyncGenerator<WebhookEndpoint>,
      /** Sets what it is given; sending the same update twice leaves the same endpoint, so it is retried like a GET. */
      update: (endpointId: string, body: UpdateWebhookEndpointBody, options?: CallOptions) =>
        call<WebhookEndpoint>({ method: 'PATCH', path: `/v1/webhook_endpoints/${id(endpointId)}`, body }, options),
      delete: (endpointId: string, options?: CallOptions) =>
        call<DeletedWebhookEndpoint>({ method: 'DELETE', path: `/v1/webhook_endpoints/${id(endpointId)}` }, options),
      /** A new secret in the response; the old one keeps signing too for 24 hours. */
      rotateSecret: (endpointId: string, options?: IdempotentCallOptions) =>
        post<WebhookEndpoint>(`/v1/webhook_endpoints/${id(endpointId)}/rotate_secret`, undefined, options),
      deliveries: (endpointId: string, query?: ListDeliveriesQuery, options?: CallOptions) =>
        get<List<WebhookDelivery>>(`/v1/webhook_endpoints/${id(endpointId)}/deliveries`, query, options),
    },
  }
}

/** Every item of a list, page after page (newest first), fetching the next page only when it is needed. */
async function* eachItem(
  call: Transport,
  path: string,
  query: object = {},
  options?: CallOptions,
): AsyncGenerator<unknown> {
  let startingAfter = (query as { starting_after?: string }).starting_after
  for (;;) {
    const page: ApiResponse<List<{ id: string }>> = await call(
      { method: 'GET', path, query: { ...query, starting_after: startingAfter } },
      options,
    )
    yield* page.data.data
    const last = page.data.data.at(-1)
    if (!page.data.has_more || !last) return
    startingAfter = last.id
  }
}
