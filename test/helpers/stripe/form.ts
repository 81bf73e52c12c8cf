// Stripe's request encoding (docs.stripe.com/api, "Request encoding"): bodies are
// application/x-www-form-urlencoded, and query strings the same, with nested objects and arrays written in
// brackets: metadata[order]=1, automatic_payment_methods[enabled]=true, expand[0]=latest_charge, created[gte]=17.
// Values stay strings; each endpoint reads them as the type its parameter has.

export type FormValue = string | FormValue[] | { [key: string]: FormValue }
export type Form = { [key: string]: FormValue }

export function parseForm(encoded: string): Form {
  const form: Form = {}
  for (const pair of encoded.split('&')) {
    if (pair === '') continue
    const [rawKey, rawValue = ''] = pair.split('=') as [string, string?]
    const key = decodeURIComponent(rawKey.replace(/\+/g, ' '))
    const value = decodeURIComponent(rawValue.replace(/\+/g, ' '))
    const path = keyPath(key)
    if (!path) throw new FormError(`Invalid parameter name: ${key}`)
    setAt(form, path, value)
  }
  return form
}

/** metadata[order] -> ['metadata', 'order']; undefined when the brackets do not close. */
function keyPath(key: string): string[] | undefined {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key)
  if (!match) return undefined
  const rest = [...match[2]!.matchAll(/\[([^[\]]*)\]/g)].map((part) => part[1]!)
  return [match[1]!, ...rest]
}

function setAt(target: { [key: string]: FormValue } | FormValue[], path: string[], value: string): void {
  const [head, ...rest] = path as [string, ...string[]]
  const slot = target as Record<string, FormValue>
  // `a[]` appends, as Rails-style encoders write arrays.
  const name = head === '' && Array.isArray(target) ? String(target.length) : head
  if (rest.length === 0) {
    slot[name] = value
    return
  }
  const nextIsIndex = /^\d*$/.test(rest[0]!)
  slot[name] ??= nextIsIndex ? [] : {}
  setAt(slot[name] as Form, rest, value)
}

/** A parameter Stripe would refuse as malformed, before any endpoint runs. */
export class FormError extends Error {}

/** The parameter as a string, or undefined; anything else is refused naming it. */
export function stringParam(form: Form, name: string): string | undefined {
  const value = form[name]
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw new FormError(`Invalid string: ${name}`)
  return value
}

export function integerParam(form: Form, name: string): number | undefined {
  const value = stringParam(form, name)
  if (value === undefined) return undefined
  if (!/^-?\d+$/.test(value)) throw new FormError(`Invalid integer: ${value}`)
  return Number(value)
}

export function booleanParam(form: Form, name: string): boolean | undefined {
  const value = stringParam(form, name)
  if (value === undefined) return undefined
  if (value !== 'true' && value !== 'false') throw new FormError(`Invalid boolean: ${value}`)
  return value === 'true'
}

/** A hash of strings (metadata): each value a string. */
export function stringMap(form: Form, name: string): Record<string, string> | undefined {
  const value = form[name]
  if (value === undefined) return undefined
  // An empty string clears metadata in Stripe's API; an empty map is what it leaves.
  if (value === '') return {}
  if (typeof value !== 'object' || Array.isArray(value)) throw new FormError(`Invalid hash: ${name}`)
  return Object.fromEntries(
    Object.entries(value).map(([key, entry]) => {
      if (typeof entry !== 'string') throw new FormError(`Invalid string: ${name}[${key}]`)
      return [key, entry]
    }),
  )
}

/** A nested hash (automatic_payment_methods, created): its string fields. */
export function hashParam(form: Form, name: string): Form | undefined {
  const value = form[name]
  if (value === undefined) return undefined
  if (typeof value !== 'object' || Array.isArray(value)) throw new FormError(`Invalid hash: ${name}`)
  return value as Form
}

export function arrayParam(form: Form, name: string): string[] | undefined {
  const value = form[name]
  if (value === undefined) return undefined
  const items = Array.isArray(value) ? value : typeof value === 'object' ? Object.values(value) : undefined
  if (!items || items.some((item) => typeof item !== 'string')) throw new FormError(`Invalid array: ${name}`)
  return items as string[]
}
