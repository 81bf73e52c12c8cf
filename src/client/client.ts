// The API's resources as typed methods. The methods are generated from openapi.yaml (./api.ts); this file gives them
// their calls. Every POST carries an Idempotency-Key: the caller's, or one generated here, once per call, before the
// first attempt, so that every retry of the call is the same request.
import { type Calls, resources } from './api.js'
import { idempotencyKey } from './idempotency-key.js'
import {
  createTransport,
  type ApiResponse,
  type CallOptions,
  type ClientOptions,
  type IdempotentCallOptions,
  type Transport,
} from './transport.js'
import type { Charge, List } from './types.js'

export type PaymentsClient = ReturnType<typeof createClient>

export function createClient(options: ClientOptions) {
  const call = createTransport(options)
  const calls: Calls = {
    async post(path, body, options: IdempotentCallOptions = {}) {
      const key =
        options.idempotencyKey === undefined ? idempotencyKey.generate() : idempotencyKey.check(options.idempotencyKey)
      return call({ method: 'POST', path, body, idempotencyKey: key }, options)
    },
    get: (path, query, options) => call({ method: 'GET', path, query }, options),
    // A PATCH sets what it is given and a DELETE of what is gone answers the same: both are retried like a GET.
    send: (method, path, body, options) => call({ method, path, body }, options),
    each: (path, query, options) => eachItem(call, path, query, options),
  }
  const api = resources(calls)

  return {
    ...api,
    /** Liveness and readiness, answered once (no retries): for a monitor, a failure is the answer. */
    health: {
      live: (options?: CallOptions) =>
        calls.get<{ status: 'ok' }>('/healthz', undefined, { retry: { maxAttempts: 1 }, ...options }),
      ready: (options?: CallOptions) =>
        calls.get<{ status: 'ok' }>('/readyz', undefined, { retry: { maxAttempts: 1 }, ...options }),
    },
    charges: {
      ...api.charges,
      /**
       * The charge a POST /v1/charges with this key created, if any: for a client that lost the response and its own
       * record of the id.
       */
      findByIdempotencyKey: async (key: string, options?: CallOptions) =>
        (await calls.get<List<Charge>>('/v1/charges', { idempotency_key: key }, options)).data.data[0],
    },
  }
}

/** Every item of a list, page after page (newest first), fetching the next page only when it is needed. */
async function* eachItem<T>(
  call: Transport,
  path: string,
  query: object = {},
  options?: CallOptions,
): AsyncGenerator<T> {
  let startingAfter = (query as { starting_after?: string }).starting_after
  for (;;) {
    const page: ApiResponse<List<{ id: string }>> = await call(
      { method: 'GET', path, query: { ...query, starting_after: startingAfter } },
      options,
    )
    yield* page.data.data as T[]
    const last = page.data.data.at(-1)
    if (!page.data.has_more || !last) return
    startingAfter = last.id
  }
}
