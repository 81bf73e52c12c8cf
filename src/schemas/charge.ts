// The charge resource and the bodies that create, capture, void and list it.
import { Type, type Static } from 'typebox'
import { AmountCents, ChargeId, Currency, Metadata, Timestamp } from './common.js'
import { ListOf, PageQuery } from './page.js'

export const CreateChargeBody = Type.Object(
  {
    amount_cents: AmountCents,
    currency: Currency,
    source: Type.String({
      pattern: '^[A-Za-z0-9_]{1,255}$',
      description: 'A payment method of the processor: with Stripe a PaymentMethod id (`pm_card_visa` in test mode); the simulated processor takes the same test names.',
    }),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    metadata: Type.Optional(Metadata),
    capture: Type.Optional(
      Type.Boolean({
        description:
          'Left out or `true`: captured at once. `false`: authorize only; the charge is `requires_capture` until it is captured (`POST /v1/charges/{id}/capture`), voided, or its authorization expires at `authorization_expires_at`.',
      }),
    ),
  },
  { title: 'CreateCharge', additionalProperties: false },
)
export type CreateChargeBody = Static<typeof CreateChargeBody>

export const CaptureChargeBody = Type.Object(
  {
    amount_cents: Type.Optional({ ...AmountCents, description: 'Left out: the whole authorized amount. Less than that: the rest of the authorization is released.' }),
  },
  { title: 'CaptureCharge', additionalProperties: false },
)

/** A void releases the whole authorization: it takes nothing. */
export const VoidChargeBody = Type.Object({}, { title: 'VoidCharge', additionalProperties: false })

export const CHARGE_STATUSES = ['succeeded', 'failed', 'requires_capture', 'voided', 'expired'] as const

export const Charge = Type.Object(
  {
    id: ChargeId,
    object: Type.Literal('charge'),
    amount_cents: { ...AmountCents, description: 'The amount charged, or authorized when the charge was created with `capture` false.' },
    amount_captured_cents: Type.Integer({ minimum: 0, description: 'What was captured (all of `amount_cents` for a charge captured at once); refunds come out of this.' }),
    amount_capturable_cents: Type.Integer({ minimum: 0, description: 'What can still be captured: `amount_cents` while `requires_capture`, otherwise 0.' }),
    amount_refunded_cents: Type.Integer({ minimum: 0 }),
    captured: Type.Boolean(),
    currency: Currency,
    source: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    metadata: Metadata,
    status: Type.Enum([...CHARGE_STATUSES], {
      description:
        '`succeeded` (captured, in full or in part), `failed` (declined), `requires_capture` (authorized, to capture or void), `voided` (the authorization released on request), `expired` (released because it was not captured by `authorization_expires_at`).',
    }),
    failure_code: Type.Union([Type.String(), Type.Null()], { description: 'Why it was declined: the processor’s decline code (`insufficient_funds`, `generic_decline`, ...).' }),
    failure_message: Type.Union([Type.String(), Type.Null()], { description: 'The processor’s words for the decline, fit to show the customer.' }),
    processor_reference: Type.Union([Type.String(), Type.Null()], {
      description:
        'The processor’s own id of the payment: with the Stripe processor its PaymentIntent (`pi_…`, also for a decline), with the simulated one `sim_ch_…`; `null` when the processor kept no record of a decline.',
    }),
    authorization_expires_at: Type.Union([Timestamp, Type.Null()], {
      description: 'Until when an uncaptured authorization holds; after that it is voided and the charge expired. `null` for a charge captured at once or declined.',
    }),
    created_at: Timestamp,
  },
  {
    title: 'Charge',
    // What reference pages and mock servers show: one coherent charge rather than one made up field by field.
    examples: [
      {
        id: 'ch_5f0c2a9be41d4c7a8e3b1f60',
        object: 'charge',
        amount_cents: 2500,
        amount_captured_cents: 2500,
        amount_capturable_cents: 0,
        amount_refunded_cents: 0,
        captured: true,
        currency: 'usd',
        source: 'pm_card_visa',
        description: 'Order 1001',
        metadata: { order: 'ord_1001' },
        status: 'succeeded',
        failure_code: null,
        failure_message: null,
        processor_reference: 'pi_3QxExample0000000000000',
        authorization_expires_at: null,
        created_at: '2026-12-04T09:30:00.000Z',
      },
    ],
  },
)
export type Charge = Static<typeof Charge>
export const ChargeList = ListOf(Charge)

// A malformed id is refused (400 validation-failed), as openapi.yaml's pattern says; a well-formed unknown one is 404.
export const ChargeParams = Type.Object({ id: ChargeId })

export const ListChargesQuery = Type.Object(
  {
    ...PageQuery(ChargeId),
    idempotency_key: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        pattern: '^[\\x20-\\x7e]+$',
        description:
          'The charge a `POST /v1/charges` with this `Idempotency-Key` created (the key itself, unquoted), while the key is kept: the way back for a client that lost both the response and its own record of the charge id. An empty list if there is none (yet).',
      }),
    ),
  },
  { additionalProperties: false },
)
