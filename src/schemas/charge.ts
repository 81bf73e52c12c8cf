// The charge resource and the bodies that create, capture, void and list it.
import { Type, type Static } from 'typebox'
import { AmountCents, ChargeId, Currency, Metadata, Text, Timestamp } from './common.js'
import { ListOf, PageQuery } from './page.js'

export const CreateChargeBody = Type.Object(
  {
    amount_cents: AmountCents,
    currency: Currency,
    source: Type.String({
      pattern: '^[A-Za-z0-9_]{1,255}$',
      description:
        'A payment method of the processor: with Stripe a PaymentMethod id (`pm_card_visa` in test mode); the ' +
        'simulated processor takes the same test names.',
    }),
    description: Type.Optional(Text({ maxLength: 1000 })),
    metadata: Type.Optional(Metadata),
    return_url: Type.Optional(
      Text({
        format: 'uri',
        maxLength: 2000,
        description:
          'Where the customer’s browser goes back to after authenticating, when the card asks for it (3-D Secure): ' +
          'the charge is then `requires_action` and its `next_action` names the page to send the customer to.',
      }),
    ),
    mandate: Type.Optional(
      Type.Object(
        {
          ip_address: Text({ minLength: 1, maxLength: 45, description: 'The address the customer accepted from.' }),
          user_agent: Text({ minLength: 1, maxLength: 500, description: 'The browser the customer accepted in.' }),
        },
        {
          title: 'Mandate',
          additionalProperties: false,
          description:
            'The customer’s acceptance, online, of a debit mandate: bank debits (`pm_usBankAccount_…`) need one, ' +
            'cards do not.',
        },
      ),
    ),
    capture: Type.Optional(
      Type.Boolean({
        description:
          'Left out or `true`: captured at once. `false`: authorize only; the charge is `requires_capture` until ' +
          'it is captured (`POST /v1/charges/{id}/capture`), voided, or its authorization expires at ' +
          '`authorization_expires_at`.',
      }),
    ),
  },
  { title: 'CreateCharge', additionalProperties: false },
)
export type CreateChargeBody = Static<typeof CreateChargeBody>

export const CaptureChargeBody = Type.Object(
  {
    amount_cents: Type.Optional({
      ...AmountCents,
      description: 'Left out: the whole authorized amount. Less than that: the rest of the authorization is released.',
    }),
  },
  { title: 'CaptureCharge', additionalProperties: false },
)

/** A void releases the whole authorization: it takes nothing. */
export const VoidChargeBody = Type.Object({}, { title: 'VoidCharge', additionalProperties: false })

export const CHARGE_STATUSES = [
  'requires_action',
  'processing',
  'succeeded',
  'failed',
  'requires_capture',
  'capture_pending',
  'void_pending',
  'voided',
  'expired',
] as const

const NextAction = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal('redirect_to_url'),
        url: Type.String({ description: 'The page to send the customer to, to authenticate.' }),
        return_url: Type.Union([Type.String(), Type.Null()]),
      },
      {
        description:
          'Send the customer’s browser to `url`; after authenticating it comes back to `return_url` (the ' +
          'request’s), if there is one.',
      },
    ),
    Type.Object(
      {
        type: Type.Literal('use_stripe_sdk'),
        client_secret: Type.String({ description: 'For Stripe.js `handleNextAction` in the customer’s browser.' }),
      },
      {
        description:
          'With the Stripe processor and no `return_url`: the customer authenticates in your page, through Stripe.js.',
      },
    ),
  ],
  { title: 'NextAction' },
)

export const DISPUTE_STATUSES = ['needs_response', 'under_review', 'won', 'lost'] as const

const Dispute = Type.Object(
  {
    status: Type.Enum([...DISPUTE_STATUSES], {
      description:
        'Open: `needs_response` (evidence is due), `under_review`; closed: `won` (the money stays), `lost` (it ' +
        'went back to the customer).',
    }),
    reason: Type.String({
      description: 'The processor’s reason: `fraudulent`, `product_not_received`, `duplicate`, ...',
    }),
    amount_cents: Type.Integer({
      minimum: 0,
      description:
        'The amount at risk: taken back from the merchant while the dispute is open, and for good if it is lost.',
    }),
    processor_reference: Type.String({
      description: 'The processor’s id of the dispute (Stripe `du_…`, simulated `sim_dp_…`).',
    }),
    created_at: Timestamp,
  },
  { title: 'Dispute' },
)

export const Charge = Type.Object(
  {
    id: ChargeId,
    object: Type.Literal('charge'),
    amount_cents: {
      ...AmountCents,
      description: 'The amount charged, or authorized when the charge was created with `capture` false.',
    },
    amount_captured_cents: Type.Integer({
      minimum: 0,
      description: 'What was captured (all of `amount_cents` for a charge captured at once); refunds come out of this.',
    }),
    amount_capturable_cents: Type.Integer({
      minimum: 0,
      description: 'What can still be captured: `amount_cents` while `requires_capture`, otherwise 0.',
    }),
    amount_refunded_cents: Type.Integer({ minimum: 0 }),
    captured: Type.Boolean(),
    currency: Currency,
    source: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    metadata: Metadata,
    status: Type.Enum([...CHARGE_STATUSES], {
      description:
        '`requires_action` (the customer must authenticate: `next_action`), `processing` (the payment method ' +
        'settles later, as bank debits do), `succeeded` (captured, in full or in part), `failed` (declined), ' +
        '`requires_capture` (authorized, to capture or void), `capture_pending` and `void_pending` (a capture or ' +
        'void the processor received and decides later), `voided` (the authorization released on request), ' +
        '`expired` (released because it was not captured by `authorization_expires_at`, or lapsed at the ' +
        'processor). Only `requires_action`, `processing`, `capture_pending` and `void_pending` move on by ' +
        'themselves, forward only, when the processor tells (an event follows: `charge.succeeded`, ' +
        '`charge.authorized`, `charge.failed`; `charge.captured`, `charge.voided`, or `charge.capture_failed` and ' +
        '`charge.void_failed`, which give the authorization back).',
    }),
    next_action: Type.Union([NextAction, Type.Null()], {
      description: 'While `requires_action`: what the customer must do. `null` otherwise.',
    }),
    dispute: Type.Union([Dispute, Type.Null()], {
      description:
        'The customer’s dispute of the charge at their bank, as the processor tells it; `null` if there is none.',
    }),
    failure_code: Type.Union([Type.String(), Type.Null()], {
      description: 'Why it was declined: the processor’s decline code (`insufficient_funds`, `generic_decline`, ...).',
    }),
    failure_message: Type.Union([Type.String(), Type.Null()], {
      description: 'The processor’s words for the decline, fit to show the customer.',
    }),
    processor_reference: Type.Union([Type.String(), Type.Null()], {
      description:
        'The processor’s own id of the payment: with the Stripe processor its PaymentIntent (`pi_…`, also for a ' +
        'decline), with the simulated one `sim_ch_…`; `null` when the processor kept no record of a decline.',
    }),
    authorization_expires_at: Type.Union([Timestamp, Type.Null()], {
      description:
        'Until when an uncaptured authorization holds; after that it is voided and the charge expired. `null` for ' +
        'a charge captured at once or declined.',
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
        next_action: null,
        dispute: null,
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
          'The charge a `POST /v1/charges` with this `Idempotency-Key` created (the key itself, unquoted), while ' +
          'the key is kept: the way back for a client that lost both the response and its own record of the charge ' +
          'id. An empty list if there is none (yet).',
      }),
    ),
  },
  { additionalProperties: false },
)
