// Slow and silent clients are cut off at the socket: headers, bodies and idle keep-alive connections all have
// deadlines, and a body still arriving at the request's deadline is a 408 problem, not a 503 or a hang.
import { createConnection, type Socket } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { chargeBody, failOnContractViolations, setupTestApp, type TestContext } from '../helpers/app.js'
import { parseRawResponse } from '../helpers/http.js'

let context: TestContext
let port: number
let apiKey: string

beforeAll(async () => {
  context = await setupTestApp({
    config: {
      HTTP_HEADERS_TIMEOUT_MS: 1000,
      HTTP_BODY_TIMEOUT_MS: 3000,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 500,
      REQUEST_TIMEOUT_MS: 1500,
      HSTS_MAX_AGE_SECONDS: 31_536_000,
    },
  })
  apiKey = (await context.newAccount()).apiKey
  await context.app.listen({ port: 0, host: '127.0.0.1' })
  port = (context.app.server.address() as { port: number }).port
})
afterEach(() => failOnContractViolations(context))
afterAll(() => context.close())

/**
 * Opens a socket, writes `chunks` as given, and resolves with what the server sent and how long it kept the socket
 * open.
 */
function session(write: (socket: Socket) => void): Promise<{ received: string; openMs: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    let received = ''
    const socket = createConnection({ port, host: '127.0.0.1' }, () => write(socket))
    socket.on('data', (chunk) => (received += chunk))
    socket.on('close', () => resolve({ received, openMs: performance.now() - started }))
    socket.on('error', reject)
    socket.setTimeout(10_000, () => reject(new Error(`socket still open after 10 s; received: ${received}`)))
  })
}

describe('HTTP timeouts', () => {
  it('when a client connects and sends nothing, then the socket is closed soon after the headers timeout', async () => {
    const { openMs } = await session(() => {})
    expect(openMs).toBeLessThan(4000)
  })

  it('when a body stops arriving, then the client gets 408 problem+json and the connection closes', async () => {
    const body = JSON.stringify(chargeBody())
    const { received } = await session((socket) =>
      socket.write(
        `POST /v1/charges HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nIdempotency-Key: slow-body\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
      ),
    )
    const response = parseRawResponse(received)
    expect(response.status).toBe(408)
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8')
    const [row] = await context.sql`select count(*)::int as count from idempotency_keys where key = 'slow-body'`
    expect(row!.count).toBe(0)
  })

  it('when a keep-alive connection goes idle after a response, then the server closes it', async () => {
    const { received, openMs } = await session((socket) => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'))
    expect(parseRawResponse(received).status).toBe(200)
    expect(openMs).toBeLessThan(3000)
  })

  it('when HSTS is configured, then responses carry Strict-Transport-Security', async () => {
    const response = await context.app.inject({ method: 'GET', url: '/healthz' })
    expect(response.headers['strict-transport-security']).toBe('max-age=31536000')
  })
})
