// The retry policy over real sockets, against a scripted server that answers each attempt as told: what is
// retried and what is not, with the same key and body bytes every time, Retry-After, per-attempt timeouts, the
// deadline and cancellation. And the backoff itself, with the randomness pinned.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import { once } from 'node:events'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ConnectionError, createClient, DEFAULT_RETRY_POLICY, ProblemError } from 'payments-api/client'
import { delayBeforeRetry, parseRetryAfter } from '../../src/client/retry.js'

type Answer = (response: ServerResponse) => void
const problem =
  (status: number, type: string, headers: Record<string, string> = {}): Answer =>
  (response) =>
    response
      .writeHead(status, { 'content-type': 'application/problem+json', ...headers })
      .end(JSON.stringify({ type: `https://payments.example.com/problems/${type}`, title: type, status, detail: type }))
const created: Answer = (response) =>
  response.writeHead(201, { 'content-type': 'application/json', 'x-request-id': 'req-ok' }).end('{"id":"ch_1"}')
const hang: Answer = () => {}

let script: Answer[] = []
const received: { headers: IncomingHttpHeaders; body: string; at: number }[] = []
const server = createServer(async (request, response) => {
  let body = ''
  for await (const chunk of request) body += chunk
  received.push({ headers: request.headers, body, at: Date.now() })
  ;(script.shift() ?? created)(response)
})
let baseUrl: string

beforeAll(async () => {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`
})
afterAll(() => {
  server.closeAllConnections()
  server.close()
})
beforeEach(() => {
  script = []
  received.length = 0
})

const client = (retry: Partial<typeof DEFAULT_RETRY_POLICY> = {}) =>
  createClient({ baseUrl, apiKey: 'sk_test_x', retry: { baseDelayMs: 5, ...retry } })
const charge = { amount_cents: 100, currency: 'usd' as const, source: 'pm_card_visa' }

async function failure(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => expect.unreachable('the call succeeded'),
    (error: unknown) => error,
  )
}

describe('createClient', () => {
  it('when the API key is missing, then it refuses to make a client, rather than send "Bearer undefined"', () => {
    for (const apiKey of [undefined, '', '  ']) {
      expect(() => createClient({ baseUrl, apiKey: apiKey as unknown as string })).toThrow(
        /createClient needs an apiKey/,
      )
    }
  })
})

describe('retries', () => {
  it('when attempts meet a 408, a 429, a 409 in flight, a 500, a 502 page and a 503, then each is retried with the same key and the same body bytes until the 201', async () => {
    script = [
      // What Node's HTTP server answers when it gave up reading a request (a stalled client or process).
      (response) => response.writeHead(408, { connection: 'close' }).end(),
      problem(429, 'rate-limited'),
      problem(409, 'idempotency-request-in-flight'),
      problem(500, 'x'),
      (response) => response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>'),
      problem(503, 'service-unavailable'),
    ]
    const result = await client({ maxAttempts: 7 }).charges.create(charge)
    expect(result).toMatchObject({ status: 201, attempts: 7, requestId: 'req-ok', data: { id: 'ch_1' } })
    expect(new Set(received.map((request) => request.headers['idempotency-key']))).toEqual(
      new Set([result.idempotencyKey]),
    )
    expect(new Set(received.map((request) => request.body))).toEqual(new Set([JSON.stringify(charge)]))
  })

  it('when the answer is 400, 401, 402, 404, 422 or a 409 that a retry cannot change, then it is thrown after one attempt', async () => {
    const answers = [
      [400, 'validation-failed'],
      [401, 'unauthorized'],
      [402, 'card-declined'],
      [404, 'resource-not-found'],
      [422, 'idempotency-key-reused'],
      [409, 'charge-not-capturable'],
    ] as const
    for (const [status, type] of answers) {
      received.length = 0
      script = [problem(status, type)]
      const error = await failure(client().charges.create(charge))
      expect(error).toBeInstanceOf(ProblemError)
      expect(error).toMatchObject({ status, type, attempts: 1 })
      expect(received).toHaveLength(1)
    }
  })

  it('when the server says Retry-After: 1, then the next attempt waits a second', async () => {
    script = [problem(503, 'processor-unavailable', { 'retry-after': '1' })]
    await client().charges.create(charge)
    expect(received[1]!.at - received[0]!.at).toBeGreaterThanOrEqual(1000)
  })

  it('when Retry-After goes past the deadline, then the answer is thrown at once rather than waited out', async () => {
    script = [problem(503, 'service-unavailable', { 'retry-after': '30' })]
    const error = await failure(client({ deadlineMs: 5_000 }).charges.create(charge))
    expect(error).toMatchObject({ status: 503, type: 'service-unavailable', attempts: 1 })
    expect(received).toHaveLength(1)
  })

  it('when every attempt fails, then the last answer is thrown with the number of attempts', async () => {
    script = Array.from({ length: 3 }, () => problem(503, 'service-unavailable'))
    const error = await failure(client({ maxAttempts: 3 }).charges.create(charge))
    expect(error).toMatchObject({ status: 503, attempts: 3 })
    expect(received).toHaveLength(3)
  })

  it('when an attempt gets no answer in time, then it is abandoned and retried, and a ConnectionError with the key says the outcome is unknown', async () => {
    script = [hang, hang]
    const error = await failure(
      client({ attemptTimeoutMs: 200, maxAttempts: 2 }).charges.create(charge, { idempotencyKey: 'order-5' }),
    )
    expect(error).toBeInstanceOf(ConnectionError)
    expect(error).toMatchObject({
      attempts: 2,
      idempotencyKey: 'order-5',
      requestSent: true,
      message: expect.stringMatching(/timed out .*the outcome is unknown/),
    })
    expect(received.map((request) => request.headers['idempotency-key'])).toEqual(['order-5', 'order-5'])
  })

  it('when every connection is refused (nothing listens there), then it is retried and ends as a ConnectionError that says the request never left', async () => {
    const closed = createServer()
    closed.listen(0, '127.0.0.1')
    await once(closed, 'listening')
    const port = (closed.address() as { port: number }).port
    await new Promise((resolve) => closed.close(resolve))
    const refused = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'k',
      retry: { baseDelayMs: 1, maxAttempts: 3 },
    })
    const error = await failure(refused.charges.create(charge, { idempotencyKey: 'order-6' }))
    expect(error).toBeInstanceOf(ConnectionError)
    expect(error).toMatchObject({
      attempts: 3,
      idempotencyKey: 'order-6',
      requestSent: false,
      message: expect.stringMatching(/ECONNREFUSED.*no attempt reached the server/),
    })
  })

  it('when one attempt may have arrived and a later one is refused, then the outcome is still unknown', async () => {
    const flaky = createServer(() => {})
    flaky.listen(0, '127.0.0.1')
    await once(flaky, 'listening')
    const port = (flaky.address() as { port: number }).port
    // The first attempt reaches it and hangs; the server then goes away, and the next attempt is refused.
    flaky.on('request', () => {
      flaky.close()
      flaky.closeAllConnections()
    })
    const call = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'k',
      retry: { baseDelayMs: 1, maxAttempts: 2, attemptTimeoutMs: 2000 },
    })
    const error = await failure(call.charges.create(charge, { idempotencyKey: 'order-7' }))
    expect(error).toMatchObject({
      attempts: 2,
      requestSent: true,
      message: expect.stringMatching(/the outcome is unknown/),
    })
  })

  it('when the caller aborts while the client waits to retry, then the call ends at once with the abort reason', async () => {
    script = [problem(503, 'service-unavailable', { 'retry-after': '10' })]
    const controller = new AbortController()
    const call = client({ deadlineMs: 60_000 }).charges.create(charge, { signal: controller.signal })
    await new Promise((resolve) => setTimeout(resolve, 100))
    controller.abort(new Error('shutting down'))
    await expect(call).rejects.toThrow('shutting down')
    expect(received).toHaveLength(1)
  })
})

describe('the backoff', () => {
  const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000 }

  it('when there is no Retry-After, then the wait is random below a ceiling that doubles up to the maximum (full jitter)', () => {
    expect([1, 2, 3, 4, 5, 6].map((attempt) => delayBeforeRetry(policy, attempt, undefined, () => 0.999999))).toEqual(
      [100, 200, 400, 800, 1000, 1000].map((ceiling) => ceiling * 0.999999),
    )
    expect(delayBeforeRetry(policy, 4, undefined, () => 0)).toBe(0)
  })

  it('when there is a Retry-After, then the wait is that, plus at most one base delay of jitter', () => {
    expect(delayBeforeRetry(policy, 1, 2000, () => 0)).toBe(2000)
    expect(delayBeforeRetry(policy, 1, 2000, () => 0.5)).toBe(2050)
  })

  it('when Retry-After is seconds, a date or nonsense, then it is read as milliseconds, or ignored', () => {
    const now = Date.parse('2026-12-02T10:00:00Z')
    expect(parseRetryAfter('3', now)).toBe(3000)
    expect(parseRetryAfter('Wed, 02 Dec 2026 10:00:05 GMT', now)).toBe(5000)
    expect(parseRetryAfter('Wed, 02 Dec 2026 09:00:00 GMT', now)).toBe(0)
    expect(parseRetryAfter('soon', now)).toBeUndefined()
    expect(parseRetryAfter(null, now)).toBeUndefined()
  })
})
