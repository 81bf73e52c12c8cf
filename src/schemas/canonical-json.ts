// JSON written one way whatever the order of its members: what two requests are compared by (a request's
// fingerprint, src/idempotency/fingerprint.ts; the simulated processor's check of a key reused with other
// parameters).

/** JSON with object keys sorted at every depth (the subset of RFC 8785 that parsed JSON bodies need). */
export function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  // A loop rather than entries/filter/map/join: this runs on every idempotent request.
  let text = ''
  for (const name of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[name]
    if (member !== undefined) text += `${text ? ',' : ''}${JSON.stringify(name)}:${canonicalJson(member)}`
  }
  return `{${text}}`
}
