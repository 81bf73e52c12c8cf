// The "call out" phase of a flow that reserved something first (a refund's amount, a pending capture): the
// processor is given the claim's operation id; if the call never went out (the request's deadline passed first),
// the reservation is given back at once; if it went out and the answer is unknown, the reservation stays for a
// retry or the recovery worker to settle, and the client gets a 503.
import type { FastifyRequest } from 'fastify'
import { downstreamIdempotencyKey } from '../plugins/idempotency.js'
import { rethrowUnavailable } from './processor.js'

export async function callOut<T>(request: FastifyRequest, call: (idempotencyKey: string) => Promise<T>, giveBack: () => Promise<void>): Promise<T> {
  try {
    return await call(downstreamIdempotencyKey(request))
  } catch (error) {
    if (!request.operationSentDownstream) await giveBack()
    return rethrowUnavailable(error)
  }
}
