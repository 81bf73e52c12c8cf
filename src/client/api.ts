// Generated from openapi.yaml by `npm run openapi` (src/openapi/client-source.ts): do not edit. The types
// are the document's components, the methods its operations that name an x-client; src/client/client.ts calls out.
import type { ApiResponse, CallOptions, IdempotentCallOptions } from './transport.js'

/** What the generated methods call: src/client/client.ts makes them, holding each Idempotency-Key still. */
export interface Calls {
  post<T>(path: string, body: unknown, options?: IdempotentCallOptions): Promise<ApiResponse<T>>
  get<T>(path: string, query?: object, options?: CallOptions): Promise<ApiResponse<T>>
  send<T>(method: 'PATCH' | 'DELETE', path: string, body: unknown, options?: CallOptions): Promise<ApiResponse<T>>
  each<T>(path: string, query?: object, options?: CallOptions): AsyncGenerator<T>
}

export type ChargeId = string

export type AmountCents = number

export type Currency = 'usd' | 'eur' | 'gbp' | 'cad' | 'aud' | 'chf' | 'jpy' | 'sek' | 'nok' | 'dkk'

export type Metadata = {
  [key: string]: string
}

export type NextAction =
  | {
      type: 'redirect_to_url'
      /** The page to send the customer to, to authenticate. */
      url: string
      return_url: string | null
    }
  | {
      type: 'use_stripe_sdk'
      /** For Stripe.js `handleNextAction` in the customer’s browser. */
      client_secret: string
    }

export type Dispute = {
  /**
   * Open: `needs_response` (evidence is due), `under_review`; closed: `won` (the money stays), `lost` (it went
   * back to the customer).
   */
  status: 'needs_response' | 'under_review' | 'won' | 'lost'
  /** The processor’s reason: `fraudulent`, `product_not_received`, `duplicate`, ... */
  reason: string
  /** The amount at risk: taken back from the merchant while the dispute is open, and for good if it is lost. */
  amount_cents: number
  /** The processor’s id of the dispute (Stripe `du_…`, simulated `sim_dp_…`). */
  processor_reference: string
  created_at: string
}

export type Charge = {
  id: ChargeId
  object: 'charge'
  /** The amount charged, or authorized when the charge was created with `capture` false. */
  amount_cents: AmountCents
  /** What was captured (all of `amount_cents` for a charge captured at once); refunds come out of this. */
  amount_captured_cents: number
  /** What can still be captured: `amount_cents` while `requires_capture`, otherwise 0. */
  amount_capturable_cents: number
  amount_refunded_cents: number
  captured: boolean
  /** ISO 4217, in lower case. */
  currency: Currency
  source: string
  description: string | null
  /**
   * Up to 20 string pairs, stored and returned untouched. A key may not be `__proto__` (JavaScript clients
   * would take it for the object’s prototype); the server refuses it as validation-failed, as it does anywhere
   * in a body.
   */
  metadata: Metadata
  /**
   * `requires_action` (the customer must authenticate: `next_action`), `processing` (the payment method settles
   * later, as bank debits do), `succeeded` (captured, in full or in part), `failed` (declined),
   * `requires_capture` (authorized, to capture or void), `capture_pending` and `void_pending` (a capture or
   * void the processor received and decides later), `voided` (the authorization released on request), `expired`
   * (released because it was not captured by `authorization_expires_at`, or lapsed at the processor). Only
   * `requires_action`, `processing`, `capture_pending` and `void_pending` move on by themselves, forward only,
   * when the processor tells (an event follows: `charge.succeeded`, `charge.authorized`, `charge.failed`;
   * `charge.captured`, `charge.voided`, or `charge.capture_failed` and `charge.void_failed`, which give the
   * authorization back).
   */
  status:
    | 'requires_action'
    | 'processing'
    | 'succeeded'
    | 'failed'
    | 'requires_capture'
    | 'capture_pending'
    | 'void_pending'
    | 'voided'
    | 'expired'
  /** While `requires_action`: what the customer must do. `null` otherwise. */
  next_action: NextAction | null
  /** The customer’s dispute of the charge at their bank, as the processor tells it; `null` if there is none. */
  dispute: Dispute | null
  /** Why it was declined: the processor’s decline code (`insufficient_funds`, `generic_decline`, ...). */
  failure_code: string | null
  /** The processor’s words for the decline, fit to show the customer. */
  failure_message: string | null
  /**
   * The processor’s own id of the payment: with the Stripe processor its PaymentIntent (`pi_…`, also for a
   * decline), with the simulated one `sim_ch_…`; `null` when the processor kept no record of a decline.
   */
  processor_reference: string | null
  /**
   * Until when an uncaptured authorization holds; after that it is voided and the charge expired. `null` for a
   * charge captured at once or declined.
   */
  authorization_expires_at: string | null
  created_at: string
}

export type Mandate = {
  /** The address the customer accepted from. */
  ip_address: string
  /** The browser the customer accepted in. */
  user_agent: string
}

export type CreateCharge = {
  /** In the currency's minor unit (cents for usd, yen for jpy, which has none). */
  amount_cents: AmountCents
  /** ISO 4217, in lower case. */
  currency: Currency
  /**
   * A payment method of the processor: with Stripe a PaymentMethod id (`pm_card_visa` in test mode); the
   * simulated processor takes the same test names.
   */
  source: string
  description?: string
  /**
   * Up to 20 string pairs, stored and returned untouched. A key may not be `__proto__` (JavaScript clients
   * would take it for the object’s prototype); the server refuses it as validation-failed, as it does anywhere
   * in a body.
   */
  metadata?: Metadata
  /**
   * Where the customer’s browser goes back to after authenticating, when the card asks for it (3-D Secure): the
   * charge is then `requires_action` and its `next_action` names the page to send the customer to.
   */
  return_url?: string
  /**
   * The customer’s acceptance, online, of a debit mandate: bank debits (`pm_usBankAccount_…`) need one, cards
   * do not.
   */
  mandate?: Mandate
  /**
   * Left out or `true`: captured at once. `false`: authorize only; the charge is `requires_capture` until it is
   * captured (`POST /v1/charges/{id}/capture`), voided, or its authorization expires at
   * `authorization_expires_at`.
   */
  capture?: boolean
}

export type CaptureCharge = {
  /** Left out: the whole authorized amount. Less than that: the rest of the authorization is released. */
  amount_cents?: AmountCents
}

export type VoidCharge = Record<string, never>

export type ChargeList = {
  object: 'list'
  data: Charge[]
  has_more: boolean
}

export type RefundId = string

export type Refund = {
  id: RefundId
  object: 'refund'
  charge: ChargeId
  /** In the currency's minor unit (cents for usd, yen for jpy, which has none). */
  amount_cents: AmountCents
  /** ISO 4217, in lower case. */
  currency: Currency
  /**
   * `pending` from the moment its amount is reserved on the charge until the processor’s answer is recorded,
   * or, when the processor received it to decide later (answered `202`), until its decision; `succeeded` once
   * it refunded; `failed` when the processor refused it or later said the refund failed (the money stays with
   * the merchant: the charge’s `amount_refunded_cents` no longer counts it).
   */
  status: 'pending' | 'succeeded' | 'failed'
  /**
   * Why the processor says it failed (`expired_or_canceled_card`, `lost_or_stolen_card`, `unknown`, ...);
   * `null` unless failed.
   */
  failure_reason: string | null
  /**
   * `api`: asked of this service; `processor`: made at the processor itself (its dashboard), and learnt from
   * its events.
   */
  origin: 'api' | 'processor'
  /** The processor’s own id of the refund (Stripe `re_…`, simulated `sim_re_…`); `null` while pending. */
  processor_reference: string | null
  created_at: string
}

export type CreateRefund = {
  /** Left out: refund whatever is left of the charge. */
  amount_cents?: AmountCents
  /**
   * On a charge made on the account’s connected account (Stripe Connect): give back the platform’s fee with the
   * refund, all of what is left of it when the refund leaves nothing of the charge, else in proportion (the
   * refund’s balance transaction shows it). `false` when left out; no effect on other charges.
   */
  refund_application_fee?: boolean
}

export type RefundList = {
  object: 'list'
  data: Refund[]
  has_more: boolean
}

export type BalanceAmount = {
  amount_cents: number
  /** ISO 4217, in lower case. */
  currency: Currency
}

export type Balance = {
  object: 'balance'
  /** What could be paid out now, per currency; negative when the account owes. */
  available: BalanceAmount[]
  /** What came in and is not available yet (before each transaction’s `available_on`). */
  pending: BalanceAmount[]
}

export type BalanceTransactionId = string

export type FeeDetail = {
  /**
   * `processor_fee`: the processor’s price for a payment; `dispute_fee`: its price for a dispute;
   * `application_fee`: the platform’s, on a payment made on the account’s connected account (Stripe Connect).
   */
  type: 'processor_fee' | 'dispute_fee' | 'application_fee'
  /** Negative when given back: a refund that gave back the platform’s fee. */
  amount_cents: number
  /** ISO 4217, in lower case. */
  currency: Currency
  description: string
}

export type PayoutId = string

export type BalanceTransaction = {
  id: BalanceTransactionId
  object: 'balance_transaction'
  /**
   * `charge`: a charge captured; `refund`: a refund made; `refund_failure`: a refund that failed later, its
   * money back; `dispute`: a dispute’s amount and fee withdrawn; `dispute_reversal`: a won dispute’s amount
   * reinstated; `payout`: paid out to the bank; `payout_failure`: a payout that failed, its money back.
   */
  type: 'charge' | 'refund' | 'refund_failure' | 'dispute' | 'dispute_reversal' | 'payout' | 'payout_failure'
  /** What moved the money: the charge (`ch_…`), the refund (`re_…`), the dispute (the processor’s id). */
  source: string
  /** Gross: positive into the balance, negative out of it. */
  amount_cents: number
  /**
   * What the processor and the platform kept: the sum of `fee_details`; negative on a refund that gave back the
   * platform’s fee.
   */
  fee_cents: number
  fee_details: FeeDetail[]
  /** `amount_cents - fee_cents`: what the balance moved by. */
  net_cents: number
  /** ISO 4217, in lower case. */
  currency: Currency
  /** When the net is available to pay out. */
  available_on: string
  /** Whether `available_on` has come; money out (a negative net) counts as available at once. */
  status: 'pending' | 'available'
  /** The payout (`po_…`, GET /v1/payouts/{id}) that carried it to the bank; `null` until one has. */
  payout: PayoutId | null
  created_at: string
}

export type BalanceTransactionList = {
  object: 'list'
  data: BalanceTransaction[]
  has_more: boolean
}

export type Payout = {
  /** The processor’s id of the payout (Stripe `po_…`). */
  id: PayoutId
  object: 'payout'
  /**
   * This account’s share of the payout: the net of its balance transactions the payout carried (one payout of
   * the processor carries the money of every account on its processor account).
   */
  amount_cents: number
  /** ISO 4217, in lower case. */
  currency: Currency
  /**
   * `in_transit`: on its way to the bank; `paid`: arrived; `failed`: the bank refused or returned it, and the
   * amount is back in the balance (a `payout_failure` transaction; a paid payout can still fail).
   */
  status: 'in_transit' | 'paid' | 'failed'
  /** When the processor expects it (or saw it) at the bank; `null` when it has not said. */
  arrival_date: string | null
  /** The processor’s reason (Stripe: `account_closed`, `no_account`, …); `null` unless failed. */
  failure_code: string | null
  /** The `payout` balance transaction that took the amount out of the balance; `null` when the share is zero. */
  balance_transaction: BalanceTransactionId | null
  /** The `payout_failure` balance transaction that gave the amount back; `null` unless failed. */
  failure_balance_transaction: BalanceTransactionId | null
  /** When the books learnt what the payout carried. */
  created_at: string
}

export type PayoutList = {
  object: 'list'
  data: Payout[]
  has_more: boolean
}

export type EventId = string

export type Event =
  | {
      id: EventId
      object: 'event'
      type:
        | 'charge.requires_action'
        | 'charge.processing'
        | 'charge.succeeded'
        | 'charge.authorized'
        | 'charge.failed'
        | 'charge.capture_pending'
        | 'charge.captured'
        | 'charge.capture_failed'
        | 'charge.void_pending'
        | 'charge.voided'
        | 'charge.void_failed'
        | 'charge.expired'
        | 'charge.refund.pending'
        | 'charge.refunded'
        | 'charge.refund.failed'
        | 'charge.dispute.created'
        | 'charge.dispute.updated'
        | 'charge.dispute.closed'
      created_at: string
      /**
       * `object`: the charge as the API returned it at that moment; `charge.refund.pending`, `charge.refunded` and
       * `charge.refund.failed` also carry the `refund`.
       */
      data: {
        object: Charge
        refund?: Refund
      }
    }
  | {
      id: EventId
      object: 'event'
      type: 'payout.created' | 'payout.paid' | 'payout.failed'
      created_at: string
      /** `object`: the payout (this account’s share of it) as the API returned it at that moment. */
      data: {
        object: Payout
      }
    }

export type EventList = {
  object: 'list'
  data: Event[]
  has_more: boolean
}

export type EventType =
  | 'charge.requires_action'
  | 'charge.processing'
  | 'charge.succeeded'
  | 'charge.authorized'
  | 'charge.failed'
  | 'charge.capture_pending'
  | 'charge.captured'
  | 'charge.capture_failed'
  | 'charge.void_pending'
  | 'charge.voided'
  | 'charge.void_failed'
  | 'charge.expired'
  | 'charge.refund.pending'
  | 'charge.refunded'
  | 'charge.refund.failed'
  | 'charge.dispute.created'
  | 'charge.dispute.updated'
  | 'charge.dispute.closed'
  | 'payout.created'
  | 'payout.paid'
  | 'payout.failed'

export type WebhookDeliveryId = string

export type WebhookEndpointId = string

export type WebhookDelivery = {
  id: WebhookDeliveryId
  object: 'webhook_delivery'
  event: EventId
  endpoint: WebhookEndpointId
  status: 'pending' | 'delivered' | 'failed'
  attempts: {
    attempted_at: string
    status_code: number | null
    duration_ms: number
    /** The first 1,000 characters of the response. */
    response_excerpt: string | null
    error: string | null
  }[]
  next_attempt_at: string | null
  delivered_at: string | null
  created_at: string
}

export type WebhookDeliveryList = {
  object: 'list'
  data: WebhookDelivery[]
  has_more: boolean
}

export type RedeliverRequest = {
  /** Only to this endpoint; left out: to every enabled endpoint the event went to. */
  endpoint_id?: WebhookEndpointId
}

export type WebhookEndpoint = {
  id: WebhookEndpointId
  object: 'webhook_endpoint'
  url: string
  description: string | null
  enabled_events: string[]
  status: 'enabled' | 'disabled'
  disabled_reason: string | null
  created_at: string
  /** The signing secret: only when the endpoint is created or its secret rotated. */
  secret?: string
}

export type CreateWebhookEndpoint = {
  /**
   * An absolute https URL, without credentials, whose host resolves to public addresses only (`400
   * webhook-url-refused` otherwise; `http://` and private addresses only where the deployment sets
   * `WEBHOOK_ALLOW_PRIVATE_URLS`).
   */
  url: string
  /** The event types to send, or `*` for all of them. */
  enabled_events: (EventType | '*')[]
  description?: string
}

export type WebhookEndpointList = {
  object: 'list'
  data: WebhookEndpoint[]
  has_more: boolean
}

export type UpdateWebhookEndpoint = {
  /**
   * An absolute https URL, without credentials, whose host resolves to public addresses only (`400
   * webhook-url-refused` otherwise; `http://` and private addresses only where the deployment sets
   * `WEBHOOK_ALLOW_PRIVATE_URLS`).
   */
  url?: string
  /** The event types to send, or `*` for all of them. */
  enabled_events?: (EventType | '*')[]
  description?: string | null
  /** `true`: stop sending to it; `false`: send again (deliveries from while it was disabled are not sent). */
  disabled?: boolean
}

export type DeletedWebhookEndpoint = {
  id: WebhookEndpointId
  object: 'webhook_endpoint'
  deleted: true
}

export type Empty = Record<string, never>

export type ListChargesQuery = {
  /** How many items, 1 to 100 (10 when left out). */
  limit?: number
  /**
   * The id of the last item of the previous page; this page has the items after it (older ones). An id that is
   * not an item of this list is a `400 cursor-not-found`.
   */
  starting_after?: ChargeId
  /**
   * The id of the first item of the previous page; this page has the items before it (newer ones), still newest
   * first. An id that is not an item of this list is a `400 cursor-not-found`.
   */
  ending_before?: ChargeId
  /**
   * Only items created after this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and to
   * any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[gt]'?: string
  /**
   * Only items created at or after this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and
   * to any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[gte]'?: string
  /**
   * Only items created before this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and to
   * any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[lt]'?: string
  /**
   * Only items created at or before this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59)
   * and to any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[lte]'?: string
  /**
   * The charge a `POST /v1/charges` with this `Idempotency-Key` created (the key itself, unquoted), while the
   * key is kept: the way back for a client that lost both the response and its own record of the charge id. An
   * empty list if there is none (yet).
   */
  idempotency_key?: string
}

export type ListChargeRefundsQuery = {
  /** How many items, 1 to 100 (10 when left out). */
  limit?: number
  /**
   * The id of the last item of the previous page; this page has the items after it (older ones). An id that is
   * not an item of this list is a `400 cursor-not-found`.
   */
  starting_after?: RefundId
  /**
   * The id of the first item of the previous page; this page has the items before it (newer ones), still newest
   * first. An id that is not an item of this list is a `400 cursor-not-found`.
   */
  ending_before?: RefundId
  /**
   * Only items created after this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and to
   * any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[gt]'?: string
  /**
   * Only items created at or after this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and
   * to any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[gte]'?: string
  /**
   * Only items created before this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and to
   * any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[lt]'?: string
  /**
   * Only items created at or before this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59)
   * and to any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[lte]'?: string
}

export type ListRefundsQuery = {
  /** How many items, 1 to 100 (10 when left out). */
  limit?: number
  /**
   * The id of the last item of the previous page; this page has the items after it (older ones). An id that is
   * not an item of this list is a `400 cursor-not-found`.
   */
  starting_after?: RefundId
  /**
   * The id of the first item of the previous page; this page has the items before it (newer ones), still newest
   * first. An id that is not an item of this list is a `400 cursor-not-found`.
   */
  ending_before?: RefundId
  /**
   * Only items created after this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and to
   * any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[gt]'?: string
  /**
   * Only items created at or after this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and
   * to any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[gte]'?: string
  /**
   * Only items created before this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and to
   * any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[lt]'?: string
  /**
   * Only items created at or before this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59)
   * and to any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[lte]'?: string
}

export type ListBalanceTransactionsQuery = {
  /** How many items, 1 to 100 (10 when left out). */
  limit?: number
  /**
   * The id of the last item of the previous page; this page has the items after it (older ones). An id that is
   * not an item of this list is a `400 cursor-not-found`.
   */
  starting_after?: BalanceTransactionId
  /**
   * The id of the first item of the previous page; this page has the items before it (newer ones), still newest
   * first. An id that is not an item of this list is a `400 cursor-not-found`.
   */
  ending_before?: BalanceTransactionId
  /**
   * Only items created after this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and to
   * any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[gt]'?: string
  /**
   * Only items created at or after this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and
   * to any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[gte]'?: string
  /**
   * Only items created before this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and to
   * any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[lt]'?: string
  /**
   * Only items created at or before this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59)
   * and to any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[lte]'?: string
  /** Only transactions of this type. */
  type?: 'charge' | 'refund' | 'refund_failure' | 'dispute' | 'dispute_reversal' | 'payout' | 'payout_failure'
  /** Only the transactions of this source (a charge `ch_…`, refund `re_…`, dispute). */
  source?: string
  /** Only the transactions that payout carried. */
  payout?: PayoutId
}

export type ListPayoutsQuery = {
  /** How many items, 1 to 100 (10 when left out). */
  limit?: number
  /**
   * The id of the last item of the previous page; this page has the items after it (older ones). An id that is
   * not an item of this list is a `400 cursor-not-found`.
   */
  starting_after?: PayoutId
  /**
   * The id of the first item of the previous page; this page has the items before it (newer ones), still newest
   * first. An id that is not an item of this list is a `400 cursor-not-found`.
   */
  ending_before?: PayoutId
  /**
   * Only items created after this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and to
   * any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[gt]'?: string
  /**
   * Only items created at or after this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and
   * to any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[gte]'?: string
  /**
   * Only items created before this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and to
   * any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[lt]'?: string
  /**
   * Only items created at or before this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59)
   * and to any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[lte]'?: string
  /** Only payouts in this status. */
  status?: 'in_transit' | 'paid' | 'failed'
}

export type ListEventsQuery = {
  /** How many items, 1 to 100 (10 when left out). */
  limit?: number
  /**
   * The id of the last item of the previous page; this page has the items after it (older ones). An id that is
   * not an item of this list is a `400 cursor-not-found`.
   */
  starting_after?: EventId
  /**
   * The id of the first item of the previous page; this page has the items before it (newer ones), still newest
   * first. An id that is not an item of this list is a `400 cursor-not-found`.
   */
  ending_before?: EventId
  /**
   * Only items created after this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and to
   * any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[gt]'?: string
  /**
   * Only items created at or after this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and
   * to any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[gte]'?: string
  /**
   * Only items created before this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and to
   * any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[lt]'?: string
  /**
   * Only items created at or before this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59)
   * and to any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[lte]'?: string
  /** Only events of this type. */
  type?: EventType
}

export type ListWebhookEndpointsQuery = {
  /** How many items, 1 to 100 (10 when left out). */
  limit?: number
  /**
   * The id of the last item of the previous page; this page has the items after it (older ones). An id that is
   * not an item of this list is a `400 cursor-not-found`.
   */
  starting_after?: WebhookEndpointId
  /**
   * The id of the first item of the previous page; this page has the items before it (newer ones), still newest
   * first. An id that is not an item of this list is a `400 cursor-not-found`.
   */
  ending_before?: WebhookEndpointId
  /**
   * Only items created after this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and to
   * any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[gt]'?: string
  /**
   * Only items created at or after this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and
   * to any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[gte]'?: string
  /**
   * Only items created before this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59) and to
   * any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[lt]'?: string
  /**
   * Only items created at or before this time. An RFC 3339 date-time, in any offset it allows (up to ±23:59)
   * and to any fraction of a second; items are stored to the microsecond and compared with the exact instant.
   */
  'created[lte]'?: string
}

export type ListWebhookDeliveriesQuery = {
  /** How many items, 1 to 100 (10 when left out). */
  limit?: number
}

/** The API's resources, as methods. */
export function resources(calls: Calls) {
  const id = (value: string) => encodeURIComponent(value)
  return {
    charges: {
      /** Create a charge. */
      create: (body: CreateCharge, options?: IdempotentCallOptions) => calls.post<Charge>('/v1/charges', body, options),
      /** List charges, newest first. */
      list: (query?: ListChargesQuery, options?: CallOptions) => calls.get<ChargeList>('/v1/charges', query, options),
      /** Every item of the list, newest first, page after page: each page fetched when it is needed. */
      all: (query?: Omit<ListChargesQuery, 'ending_before'>, options?: CallOptions) =>
        calls.each<Charge>('/v1/charges', query, options),
      /** Capture an authorized charge, in full or in part. */
      capture: (chargeId: string, body: CaptureCharge = {}, options?: IdempotentCallOptions) =>
        calls.post<Charge>(`/v1/charges/${id(chargeId)}/capture`, body, options),
      /** Void an authorization. */
      void: (chargeId: string, options?: IdempotentCallOptions) =>
        calls.post<Charge>(`/v1/charges/${id(chargeId)}/void`, undefined, options),
      /** Retrieve a charge. */
      retrieve: (chargeId: string, options?: CallOptions) =>
        calls.get<Charge>(`/v1/charges/${id(chargeId)}`, undefined, options),
      /** List a charge’s refunds. */
      listRefunds: (chargeId: string, query?: ListChargeRefundsQuery, options?: CallOptions) =>
        calls.get<RefundList>(`/v1/charges/${id(chargeId)}/refunds`, query, options),
    },
    refunds: {
      /** Refund a charge, in part or in full. */
      create: (chargeId: string, body: CreateRefund, options?: IdempotentCallOptions) =>
        calls.post<Refund>(`/v1/charges/${id(chargeId)}/refunds`, body, options),
      /** List refunds, newest first. */
      list: (query?: ListRefundsQuery, options?: CallOptions) => calls.get<RefundList>('/v1/refunds', query, options),
      /** Every item of the list, newest first, page after page: each page fetched when it is needed. */
      all: (query?: Omit<ListRefundsQuery, 'ending_before'>, options?: CallOptions) =>
        calls.each<Refund>('/v1/refunds', query, options),
      /** Retrieve a refund. */
      retrieve: (refundId: string, options?: CallOptions) =>
        calls.get<Refund>(`/v1/refunds/${id(refundId)}`, undefined, options),
    },
    balance: {
      /** Retrieve the balance. */
      retrieve: (options?: CallOptions) => calls.get<Balance>('/v1/balance', undefined, options),
    },
    balanceTransactions: {
      /** Retrieve a balance transaction. */
      retrieve: (balanceTransactionId: string, options?: CallOptions) =>
        calls.get<BalanceTransaction>(`/v1/balance_transactions/${id(balanceTransactionId)}`, undefined, options),
      /** List balance transactions, newest first. */
      list: (query?: ListBalanceTransactionsQuery, options?: CallOptions) =>
        calls.get<BalanceTransactionList>('/v1/balance_transactions', query, options),
      /** Every item of the list, newest first, page after page: each page fetched when it is needed. */
      all: (query?: Omit<ListBalanceTransactionsQuery, 'ending_before'>, options?: CallOptions) =>
        calls.each<BalanceTransaction>('/v1/balance_transactions', query, options),
    },
    payouts: {
      /** Retrieve a payout. */
      retrieve: (payoutId: string, options?: CallOptions) =>
        calls.get<Payout>(`/v1/payouts/${id(payoutId)}`, undefined, options),
      /** List payouts, newest first. */
      list: (query?: ListPayoutsQuery, options?: CallOptions) => calls.get<PayoutList>('/v1/payouts', query, options),
      /** Every item of the list, newest first, page after page: each page fetched when it is needed. */
      all: (query?: Omit<ListPayoutsQuery, 'ending_before'>, options?: CallOptions) =>
        calls.each<Payout>('/v1/payouts', query, options),
    },
    events: {
      /** List events, newest first. */
      list: (query?: ListEventsQuery, options?: CallOptions) => calls.get<EventList>('/v1/events', query, options),
      /** Every item of the list, newest first, page after page: each page fetched when it is needed. */
      all: (query?: Omit<ListEventsQuery, 'ending_before'>, options?: CallOptions) =>
        calls.each<Event>('/v1/events', query, options),
      /** Retrieve an event. */
      retrieve: (eventId: string, options?: CallOptions) =>
        calls.get<Event>(`/v1/events/${id(eventId)}`, undefined, options),
      /** Send an event again. */
      redeliver: (eventId: string, body: RedeliverRequest = {}, options?: IdempotentCallOptions) =>
        calls.post<WebhookDeliveryList>(`/v1/events/${id(eventId)}/redeliver`, body, options),
    },
    webhookEndpoints: {
      /** Create a webhook endpoint. */
      create: (body: CreateWebhookEndpoint, options?: IdempotentCallOptions) =>
        calls.post<WebhookEndpoint>('/v1/webhook_endpoints', body, options),
      /** List webhook endpoints, newest first. */
      list: (query?: ListWebhookEndpointsQuery, options?: CallOptions) =>
        calls.get<WebhookEndpointList>('/v1/webhook_endpoints', query, options),
      /** Every item of the list, newest first, page after page: each page fetched when it is needed. */
      all: (query?: Omit<ListWebhookEndpointsQuery, 'ending_before'>, options?: CallOptions) =>
        calls.each<WebhookEndpoint>('/v1/webhook_endpoints', query, options),
      /** Retrieve a webhook endpoint. */
      retrieve: (webhookEndpointId: string, options?: CallOptions) =>
        calls.get<WebhookEndpoint>(`/v1/webhook_endpoints/${id(webhookEndpointId)}`, undefined, options),
      /** Update a webhook endpoint. */
      update: (webhookEndpointId: string, body: UpdateWebhookEndpoint, options?: CallOptions) =>
        calls.send<WebhookEndpoint>('PATCH', `/v1/webhook_endpoints/${id(webhookEndpointId)}`, body, options),
      /** Delete a webhook endpoint. */
      delete: (webhookEndpointId: string, options?: CallOptions) =>
        calls.send<DeletedWebhookEndpoint>(
          'DELETE',
          `/v1/webhook_endpoints/${id(webhookEndpointId)}`,
          undefined,
          options,
        ),
      /** Rotate the signing secret. */
      rotateSecret: (webhookEndpointId: string, options?: IdempotentCallOptions) =>
        calls.post<WebhookEndpoint>(`/v1/webhook_endpoints/${id(webhookEndpointId)}/rotate_secret`, undefined, options),
      /** List the deliveries of an endpoint, with every attempt. */
      deliveries: (webhookEndpointId: string, query?: ListWebhookDeliveriesQuery, options?: CallOptions) =>
        calls.get<WebhookDeliveryList>(`/v1/webhook_endpoints/${id(webhookEndpointId)}/deliveries`, query, options),
    },
  }
}
