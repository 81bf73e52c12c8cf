// The response a route returns from its transaction, and the exact form in which it is stored and replayed.
import type { RowInsert } from '../db/row-insert.js'

export interface RouteResponse {
  status: number
  body: unknown
  /** Defaults to application/json. */
  contentType?: string
  location?: string
}

/**
 * What a route recorded: the rows that make it so, as data, and the response they answer with. The idempotency
 * plugin commits the rows and the key's completion in one statement (reply.commit), shared with other requests
 * committing at the same moment; a transaction can send them (insertRow in src/db/row-insert.ts).
 */
export interface Recorded {
  writes: RowInsert[]
  response: RouteResponse
}

export interface StoredResponse {
  status: number
  headers: Record<string, string>
  body: Buffer
}

/** The bytes sent now are the bytes replayed later: the body is serialised once, here. */
export function toStoredResponse(response: RouteResponse): StoredResponse {
  const headers: Record<string, string> = { 'content-type': response.contentType ?? 'application/json; charset=utf-8' }
  if (response.location) headers.location = response.location
  return { status: response.status, headers, body: Buffer.from(JSON.stringify(response.body)) }
}
