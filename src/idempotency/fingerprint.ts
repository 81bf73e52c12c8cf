// What makes two requests "the same request": method, route, path parameters and body, compared as
// canonical JSON so that spacing and key order never turn an honest retry into a 422.
import { hash } from 'node:crypto'
import { canonicalJson } from '../schemas/canonical-json.js'

export function requestFingerprint(request: { method: string; route: string; params: unknown; body: unknown }): Buffer {
  return hash(
    'sha256',
    [request.method, request.route, canonicalJson({ params: request.params ?? {}, body: request.body ?? null })].join(
      '\n',
    ),
    'buffer',
  )
}
