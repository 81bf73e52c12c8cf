// The charge resource and the bodies that create, capture and list it.
import { Type, type Static } from 'typebox'
import { AmountCents, ChargeId, Currency, Metadata, Timestamp } from './common.js'
import { PageQuery } from './page.js'

export const CreateChargeBody = Type.Object(
  {
    amount_cents: AmountCents,
    currency: Currency,
    source: Type.String({ pattern: '^[A-Za-z0-9_]{1,255}$' }),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    metadata: Type.Optional(Metadata),
    /** false: authorize only (status requires_capture), and capture later with POST /v1/charges/:id/capture. */
    capture: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
export type CreateChargeBody = Static<typeof CreateChargeBody>

export const CaptureChargeBody = Type.Object(
  {
    /** Omitted: the whole authorized amount. Less than that: the rest of the authorization is released. */
    amount_cents: Type.Optional(AmountCents),
  },
  { additionalProperties: false },
)

export const Charge = Type.Object({
  id: ChargeId,
  object: Type.Literal('charge'),
  amount_cents: AmountCents,
  amount_captured_cents: Type.Integer({ minimum: 0 }),
  /** What can still be captured: the authorized amount while the charge is requires_capture, else 0. */
  amount_capturable_cents: Type.Integer({ minimum: 0 }),
  amount_refunded_cents: Type.Integer({ minimum: 0 }),
  captured: Type.Boolean(),
  currency: Currency,
  source: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  metadata: Metadata,
  status: Type.Enum(['succeeded', 'failed', 'requires_capture', 'voided', 'expired']),
  failure_code: Type.Union([Type.String(), Type.Null()]),
  failure_message: Type.Union([Type.String(), Type.Null()]),
  /** The processor's own id of the payment (Stripe: the PaymentIntent); null when it kept no record of a decline. */
  processor_reference: Type.Union([Type.String(), Type.Null()]),
  /** Until when an uncaptured authorization holds; after that it is voided and the charge expired. */
  authorization_expires_at: Type.Union([Timestamp, Type.Null()]),
  created_at: Timestamp,
})
export type Charge = Static<typeof Charge>

// A malformed id is refused (400 validation-failed), as openapi.yaml's pattern says; a well-formed unknown one is 404.
export const ChargeParams = Type.Object({ id: ChargeId })

export const ListChargesQuery = Type.Object(
  {
    ...PageQuery(ChargeId),
    /** The charge a POST /v1/charges with this Idempotency-Key created, if any: for a client that lost both. */
    idempotency_key: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' })),
  },
  { additionalProperties: false },
)
