// The refund resource and the body that creates it.
import { Type, type Static } from 'typebox'
import { AmountCents, ChargeId, Currency, RefundId, Timestamp } from './common.js'
import { ListOf, PageQuery } from './page.js'

export const CreateRefundBody = Type.Object(
  {
    amount_cents: Type.Optional({ ...AmountCents, description: 'Left out: refund whatever is left of the charge.' }),
    refund_application_fee: Type.Optional(
      Type.Boolean({
        description:
          'On a charge made on the account’s connected account (Stripe Connect): give back the platform’s fee with ' +
          'the refund, all of what is left of it when the refund leaves nothing of the charge, else in proportion ' +
          '(the refund’s balance transaction shows it). `false` when left out; no effect on other charges.',
      }),
    ),
  },
  { title: 'CreateRefund', additionalProperties: false },
)

export const Refund = Type.Object(
  {
    id: RefundId,
    object: Type.Literal('refund'),
    charge: ChargeId,
    amount_cents: AmountCents,
    currency: Currency,
    status: Type.Enum(['pending', 'succeeded', 'failed'], {
      description:
        '`pending` from the moment its amount is reserved on the charge until the processor’s answer is recorded, ' +
        'or, when the processor received it to decide later (answered `202`), until its decision; `succeeded` once ' +
        'it refunded; `failed` when the processor refused it or later said the refund failed (the money stays with ' +
        'the merchant: the charge’s `amount_refunded_cents` no longer counts it).',
    }),
    failure_reason: Type.Union([Type.String(), Type.Null()], {
      description:
        'Why the processor says it failed (`expired_or_canceled_card`, `lost_or_stolen_card`, `unknown`, ...); ' +
        '`null` unless failed.',
    }),
    origin: Type.Enum(['api', 'processor'], {
      description:
        '`api`: asked of this service; `processor`: made at the processor itself (its dashboard), and learnt from ' +
        'its events.',
    }),
    processor_reference: Type.Union([Type.String(), Type.Null()], {
      description: 'The processor’s own id of the refund (Stripe `re_…`, simulated `sim_re_…`); `null` while pending.',
    }),
    created_at: Timestamp,
  },
  {
    title: 'Refund',
    examples: [
      {
        id: 're_0b7d3e91c2a84f56a1d9e7c4',
        object: 'refund',
        charge: 'ch_5f0c2a9be41d4c7a8e3b1f60',
        amount_cents: 1000,
        currency: 'usd',
        status: 'succeeded',
        failure_reason: null,
        origin: 'api',
        processor_reference: 're_3QxExample0000000000000',
        created_at: '2026-12-04T10:05:00.000Z',
      },
    ],
  },
)
export type Refund = Static<typeof Refund>
export const RefundList = ListOf(Refund)

export const RefundParams = Type.Object({ id: RefundId })

export const ListRefundsQuery = Type.Object(PageQuery(RefundId), { additionalProperties: false })
