// Shared schema primitives: money, currencies, ids, and the problem body every error uses.
import { Type } from 'typebox'

export const SUPPORTED_CURRENCIES = ['usd', 'eur', 'gbp', 'cad', 'aud', 'chf', 'jpy', 'sek', 'nok', 'dkk'] as const

/** In the currency's minor unit (cents for usd, yen for jpy). */
export const AmountCents = Type.Integer({ minimum: 1, maximum: 99_999_999 })
export const Currency = Type.Enum([...SUPPORTED_CURRENCIES])
export const Timestamp = Type.String({ format: 'date-time' })
export const ChargeId = Type.String({ pattern: '^ch_[0-9a-f]{24}$' })
export const RefundId = Type.String({ pattern: '^re_[0-9a-f]{24}$' })

/** Up to 20 short string pairs that the API stores and returns untouched. */
export const Metadata = Type.Record(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,40}$' }), Type.String({ maxLength: 500 }), {
  maxProperties: 20,
  additionalProperties: false,
  // Never reached by a request (src/plugins/http-edge.ts refuses the key while parsing): says what openapi.yaml says.
  propertyNames: { not: { const: '__proto__' } },
})

export const ProblemSchema = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.String(),
})
