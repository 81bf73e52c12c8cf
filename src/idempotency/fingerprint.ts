// What makes two requests "the same request": method, route, path parameters and body, compared as
// canonical JSON so that spacing and key order never turn an honest retry into a 422.
import { hash } from 'node:crypto'

export function requestFingerprint(request: { method: string; route: string; params: unknown; body: unknown }): Buffer {
  return hash(
    'sha256',
    [request.method, request.route, canonicalJson({ params: request.params ?? {}, body: request.body ?? null })].join(
      '\n',
    ),
    'buffer',
  )
}

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
