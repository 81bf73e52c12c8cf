// The refund resource and the body that creates it.
import { Type, type Static } from 'typebox'
import { AmountCents, ChargeId, Currency, RefundId, Timestamp } from './common.js'
import { PageQuery } from './page.js'

export const CreateRefundBody = Type.Object(
  {
    /** Omitted: refund whatever is left of the charge. */
    amount_cents: Type.Optional(AmountCents),
  },
  { additionalProperties: false },
)

export const Refund = Type.Object({
  id: RefundId,
  object: Type.Literal('refund'),
  charge: ChargeId,
  amount_cents: AmountCents,
  currency: Currency,
  /** pending from the moment its amount is reserved until the processor's answer is recorded. */
  status: Type.Enum(['pending', 'succeeded']),
  /** The processor's own id of the refund (Stripe: re_...); null while pending. */
  processor_reference: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
})
export type Refund = Static<typeof Refund>

export const RefundParams = Type.Object({ id: RefundId })

export const ListRefundsQuery = Type.Object(PageQuery(RefundId), { additionalProperties: false })
