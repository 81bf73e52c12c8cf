// The response a route returns from its transaction, and the exact form in which it is stored and replayed.
import type { PendingQuery, Row } from 'postgres'

export interface RouteResponse {
  status: number
  body: unknown
  /** Defaults to application/json. */
  contentType?: string
  location?: string
}

/**
 * What a route recorded: the writes that make it so, not yet run, and the response they answer with. The idempotency
 * plugin runs the writes and the key's completion as one statement (reply.commit); a transaction can send them
 * (sendAll in src/db/pipeline.ts). Writes that need no answer from the database can be committed in one round trip.
 */
export interface Recorded {
  writes: PendingQuery<Row[]>[]
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
