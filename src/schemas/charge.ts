// The charge resource and the bodies that create and list it.
import { Type, type Static } from 'typebox'
import { AmountCents, ChargeId, Currency, Metadata, Timestamp } from './common.js'

export const CreateChargeBody = Type.Object(
  {
    amount_cents: AmountCents,
    currency: Currency,
    source: Type.String({ pattern: '^[A-Za-z0-9_]{1,255}$' }),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
)
export type CreateChargeBody = Static<typeof CreateChargeBody>

export const Charge = Type.Object({
  id: ChargeId,
  object: Type.Literal('charge'),
  amount_cents: AmountCents,
  amount_refunded_cents: Type.Integer({ minimum: 0 }),
  currency: Currency,
  source: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  metadata: Metadata,
  status: Type.Enum(['succeeded', 'failed']),
  failure_code: Type.Union([Type.String(), Type.Null()]),
  failure_message: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
})
export type Charge = Static<typeof Charge>

export const ChargeParams = Type.Object({ id: Type.String({ maxLength: 64 }) })

export const DEFAULT_PAGE_SIZE = 10

export const ListChargesQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: DEFAULT_PAGE_SIZE })),
    starting_after: Type.Optional(ChargeId),
  },
  { additionalProperties: false },
)

export const ChargeList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(Charge),
  has_more: Type.Boolean(),
})
