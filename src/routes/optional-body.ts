// One rule for every POST whose body is optional (capture, void, redeliver, rotate_secret): no body at all, or an
// empty one, means {}; a body that is sent must be a JSON object its schema accepts, so `null`, `[1,2]`, `"s"` or
// an unknown field is a 400 everywhere alike.
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'

/** The body of a POST that takes none: an object with nothing in it. */
export const EmptyBody = Type.Object({}, { title: 'Empty', additionalProperties: false })

/**
 * preValidation: an absent body is the empty object (an empty JSON body parses to absent: src/plugins/http-edge.ts).
 */
export async function absentBodyIsEmpty(request: FastifyRequest): Promise<void> {
  if (request.body === undefined) request.body = {}
}
