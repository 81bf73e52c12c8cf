// What makes two requests "the same request": method, route, path parameters and body, compared as
// canonical JSON so that spacing and key order never turn an honest retry into a 422.
import { createHash } from 'node:crypto'

export function requestFingerprint(request: { method: string; route: string; params: unknown; body: unknown }): Buffer {
  return createHash('sha256')
    .update(`${request.method}\n${request.route}\n${canonicalJson({ params: request.params ?? {}, body: request.body ?? null })}`)
    .digest()
}

/** JSON with object keys sorted at every depth (the subset of RFC 8785 that parsed JSON bodies need). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([name, member]) => `${JSON.stringify(name)}:${canonicalJson(member)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}
