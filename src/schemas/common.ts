// Shared schema primitives: money, currencies, ids, metadata and the problem body every error uses. A schema with a
// `title` is a named component of openapi.yaml (src/openapi/schemas.ts); `description`s are the document's words.
import { Type, type TStringOptions } from 'typebox'

export const SUPPORTED_CURRENCIES = ['usd', 'eur', 'gbp', 'cad', 'aud', 'chf', 'jpy', 'sek', 'nok', 'dkk'] as const
export type Currency = (typeof SUPPORTED_CURRENCIES)[number]
/** The currencies without a minor unit (ISO 4217's exponent 0): an amount in them is in whole units. */
export const ZERO_DECIMAL_CURRENCIES: readonly Currency[] = ['jpy']

export const AmountCents = Type.Integer({
  title: 'AmountCents',
  minimum: 1,
  maximum: 99_999_999,
  description: "In the currency's minor unit (cents for usd, yen for jpy, which has none).",
})
export const Currency = Type.Enum([...SUPPORTED_CURRENCIES], {
  title: 'Currency',
  description: 'ISO 4217, in lower case.',
})
export const Timestamp = Type.String({ format: 'date-time' })

/**
 * Any Unicode text but NUL, which the server refuses wherever it comes (validator.ts), said in the document too so
 * that client generators and schema-driven fuzzers do not send it: as a string that must not contain NUL
 * (`not: {pattern: "[\u0000]"}`), not as a pattern every character must match. A fuzzer draws a value for a pattern
 * from the pattern, and for `[^\u0000]*` its generator (Schemathesis 4.25 on Rust's regex) also drew unpaired
 * surrogates that no JSON body can carry, and never finished; a string with a barred pattern is drawn from plain text
 * and filtered. Every engine reads `[\u0000]` alike (ECMA-262 with and without the u flag, Python's re, Rust's
 * regex). Unpaired surrogates, which the server refuses too, are not Unicode text (RFC 8259 §8.2, I-JSON): generators
 * do not make them, and the validation-failed problem names them.
 */
export const NO_NUL = { pattern: '[\\u0000]' }

/** Free text a client sends (a description, a metadata value, a URL). */
export const Text = (options: TStringOptions = {}) => Type.String({ not: NO_NUL, ...options })

/**
 * Every resource's id and its prefix, declared once: src/db/ids.ts makes ids of these prefixes only, and each id
 * schema's pattern follows. A fork's resource adds its own here (PayoutId: 'po').
 */
export const ID_PREFIXES = {
  ChargeId: 'ch',
  RefundId: 're',
  EventId: 'evt',
  WebhookEndpointId: 'we',
  WebhookDeliveryId: 'wd',
  BalanceTransactionId: 'txn',
  /** The platform's books' rows (src/ledger/platform-fees.ts): never shown by the API. */
  PlatformFeeId: 'pfee',
} as const
export type IdPrefix = (typeof ID_PREFIXES)[keyof typeof ID_PREFIXES]

/** The id of a resource: its prefix, then 24 hexadecimal digits. */
export const ResourceId = (name: keyof typeof ID_PREFIXES) =>
  Type.String({ title: name, pattern: `^${ID_PREFIXES[name]}_[0-9a-f]{24}$` })
export const ChargeId = ResourceId('ChargeId')
export const RefundId = ResourceId('RefundId')

/** The processor's own id of a payout (Stripe `po_…`, simulated `sim_po_…`): payouts are the processor's. */
export const PayoutId = Type.String({
  title: 'PayoutId',
  minLength: 1,
  maxLength: 255,
  pattern: '^[A-Za-z0-9_]+$',
  description: 'The processor’s id of the payout (Stripe `po_…`).',
})

export const Metadata = Type.Unsafe<Record<string, string>>({
  type: 'object',
  title: 'Metadata',
  description:
    'Up to 20 string pairs, stored and returned untouched. A key may not be `__proto__` (JavaScript clients would ' +
    'take it for the object’s prototype); the server refuses it as validation-failed, as it does anywhere in a ' +
    'body.',
  maxProperties: 20,
  additionalProperties: { type: 'string', maxLength: 500, not: NO_NUL },
  // The parser refuses a __proto__ key before this is reached (src/plugins/http-edge.ts): said here for readers.
  propertyNames: { pattern: '^[A-Za-z0-9_.-]{1,40}$', not: { const: '__proto__' } },
})

export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
  },
  { title: 'Problem' },
)
