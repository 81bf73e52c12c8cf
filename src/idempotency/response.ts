// The response a route returns from its transaction, and the exact form in which it is stored and replayed.

export interface RouteResponse {
  status: number
  body: unknown
  /** Defaults to application/json. */
  contentType?: string
  location?: string
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
