// An Adyen-compatible Checkout API server for tests, on 127.0.0.1, that the official @adyen/api-library reaches
// through its ClientInterface (src/processor/adyen/transport.ts). It follows Adyen's public specification
// (Adyen/adyen-openapi, CheckoutService-v72 and Webhooks-v1) and documentation, not an adapter:
// - X-API-Key authentication, JSON bodies, errors as ServiceError {status, errorCode, message, errorType};
// - payments and modifications (payments.ts), decided later by signed notification batches (notifications.ts);
// - idempotency (development-resources/api-idempotency): a POST's answer is kept under its Idempotency-Key (at most
//   64 characters, scoped to the company account: here the API key) and a request with the same key gets the first
//   answer again, whatever its body, with the key echoed in the Idempotency-Key header. The page does not say what a
//   request meets while the first one under its key is still executing: here it waits for it, and gets its answer.
// Faults come on cue (fault()): drop the connection before acting or after, delay, answer 500.
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { type NotificationSender, notificationSender } from './notifications.js'
import { AdyenBook, AdyenFailure, type ModificationKind } from './payments.js'

export const CHECKOUT_VERSION = 'v72'

export interface LoggedRequest {
  method: string
  path: string
  idempotencyKey: string | undefined
  body: Record<string, unknown>
  receivedAt: number
  /** The status answered; 'dropped' when the connection was cut instead. */
  outcome: number | 'dropped'
  replayed: boolean
}

export type Fault =
  /** The connection is cut before the request is acted on: nothing happened. */
  | { kind: 'drop-before' }
  /** The request is acted on (and its answer kept under its key), then the connection is cut. */
  | { kind: 'drop-after' }
  /** The request is held `ms` before acting, or its answer `ms` after. */
  | { kind: 'delay'; ms: number; when: 'before' | 'after' }
  /** 500 before acting: nothing happened, nothing is kept. */
  | { kind: 'error' }

export interface AdyenTestServer {
  /** What replaces https://checkout-test.adyen.com in the library's URLs. */
  url: string
  apiKey: string
  merchantAccount: string
  book: AdyenBook
  requests: LoggedRequest[]
  fault(match: { path: RegExp }, fault: Fault, times?: number): void
  clearFaults(): void
  notifications: NotificationSender
  /**
   * What happens at Adyen after its answers, each told by a notification (authenticate: the shopper's 3-D Secure, as
   * the page at the action's url does, giving the redirectResult for /payments/details).
   */
  later: Pick<AdyenBook, 'authenticate' | 'settle' | 'decide' | 'decideAll' | 'chargeback'>
  close(): Promise<void>
}

interface Kept {
  /** Unset while the first request under the key is executing. */
  answer?: { status: number; body: unknown }
  done: Promise<void>
}

const MODIFICATIONS: Record<string, ModificationKind> = {
  captures: 'capture',
  cancels: 'cancel',
  refunds: 'refund',
  reversals: 'reversal',
}

export async function startAdyenServer(
  options: {
    port?: number
    apiKey?: string
    merchantAccount?: string
    /** Unset: modifications are decided only on cue (later.decide); otherwise this long after they were received. */
    decideAfterMs?: number
  } = {},
): Promise<AdyenTestServer> {
  const apiKey = options.apiKey ?? `AQE_test_${randomBytes(12).toString('hex')}`
  const merchantAccount = options.merchantAccount ?? 'TestMerchantECOM'
  const notifications = notificationSender()
  const book = new AdyenBook(new Set([merchantAccount]), (item) => notifications.send(item), options.decideAfterMs)
  const requests: LoggedRequest[] = []
  const faults: { path: RegExp; fault: Fault; times: number }[] = []
  const kept = new Map<string, Kept>()
  let url = ''

  const routes: { pattern: RegExp; act: (body: Record<string, unknown>, id: string) => unknown }[] = [
    { pattern: new RegExp(`^/${CHECKOUT_VERSION}/payments$`), act: (body) => book.pay(body, url) },
    { pattern: new RegExp(`^/${CHECKOUT_VERSION}/payments/details$`), act: (body) => book.details(body) },
    {
      pattern: new RegExp(`^/${CHECKOUT_VERSION}/payments/([A-Z0-9]+)/(captures|cancels|refunds|reversals)$`),
      act: (body, path) => {
        const [, payment, kind] = path.split('/').slice(2)
        return book.modify(MODIFICATIONS[kind!]!, payment!, body)
      },
    },
  ]

  const server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) send(response, 500, new AdyenFailure(500, '000', String(error), 'internal').body())
    })
  })

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://adyen.test').pathname
    const raw = await readBody(request)
    const threeDSecure = /^\/test\/threeds\/([A-Z0-9]+)$/.exec(path)
    if (threeDSecure && request.method === 'GET') return shopperRedirect(request, response, threeDSecure[1]!)
    const idempotencyKey = headerOf(request, 'idempotency-key')
    const entry: LoggedRequest = {
      method: request.method ?? 'GET',
      path,
      idempotencyKey,
      body: {},
      receivedAt: Date.now(),
      outcome: 'dropped',
      replayed: false,
    }
    requests.push(entry)
    const answer = (status: number, body: unknown) => {
      entry.outcome = status
      send(response, status, body, idempotencyKey ? { 'idempotency-key': idempotencyKey } : {})
    }
    if (headerOf(request, 'x-api-key') !== apiKey)
      return answer(401, new AdyenFailure(401, '000', 'HTTP Status Response - Unauthorized', 'security').body())
    const route = request.method === 'POST' ? routes.find((candidate) => candidate.pattern.test(path)) : undefined
    if (!route) return answer(404, new AdyenFailure(404, '000', 'Not Found', 'validation').body())
    try {
      entry.body = JSON.parse(raw || '{}')
    } catch (error) {
      return answer(400, new AdyenFailure(400, '702', `Unexpected input: ${(error as Error).message}`).body())
    }
    if (idempotencyKey !== undefined && idempotencyKey.length > 64)
      return answer(400, new AdyenFailure(400, '702', 'Idempotency-Key longer than 64 characters').body())

    const previous = idempotencyKey === undefined ? undefined : kept.get(idempotencyKey)
    if (previous) {
      await previous.done
      entry.replayed = true
      return answer(previous.answer!.status, previous.answer!.body)
    }
    const fault = takeFault(path)
    if (fault?.kind === 'drop-before') return void request.socket.destroy()
    if (fault?.kind === 'error')
      return answer(500, new AdyenFailure(500, '000', 'Simulated failure on cue.', 'internal').body())
    let finished = () => {}
    const keeping: Kept = { done: new Promise((resolve) => (finished = resolve)) }
    if (idempotencyKey !== undefined) kept.set(idempotencyKey, keeping)
    if (fault?.kind === 'delay' && fault.when === 'before') await sleep(fault.ms)
    try {
      const body = route.act(entry.body, path)
      keeping.answer = { status: /\/payments\/[A-Z0-9]+\//.test(path) ? 201 : 200, body }
    } catch (error) {
      if (!(error instanceof AdyenFailure)) throw error
      keeping.answer = { status: error.status, body: error.body() }
    } finally {
      finished()
    }
    if (fault?.kind === 'drop-after') {
      entry.outcome = 'dropped'
      return void request.socket.destroy()
    }
    if (fault?.kind === 'delay' && fault.when === 'after') await sleep(fault.ms)
    answer(keeping.answer.status, keeping.answer.body)
  }

  /** The 3-D Secure page: `?result=authenticated|failed` sends the shopper back to the returnUrl. */
  function shopperRedirect(request: IncomingMessage, response: ServerResponse, payment: string): void {
    const result = new URL(request.url ?? '/', 'http://adyen.test').searchParams.get('result')
    const returnUrl = book.payments.get(payment)?.returnUrl
    if (!returnUrl || book.payments.get(payment)?.state !== 'redirect')
      return void send(response, 404, 'no such challenge')
    if (result !== 'authenticated' && result !== 'failed') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      return void response.end(
        `<!doctype html><title>3-D Secure</title><p>Test 3-D Secure for ${payment}:</p>` +
          `<a href="?result=authenticated">Authenticate</a> <a href="?result=failed">Fail</a>`,
      )
    }
    const back = new URL(returnUrl)
    back.searchParams.set('redirectResult', book.authenticate(payment, result === 'authenticated'))
    response.writeHead(302, { location: back.toString() })
    response.end()
  }

  function takeFault(path: string): Fault | undefined {
    const rule = faults.find((candidate) => candidate.path.test(path))
    if (!rule) return undefined
    if (--rule.times === 0) faults.splice(faults.indexOf(rule), 1)
    return rule.fault
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', resolve)
  })
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url,
    apiKey,
    merchantAccount,
    book,
    requests,
    fault: (match, fault, times = 1) => void faults.push({ path: match.path, fault, times }),
    clearFaults: () => void faults.splice(0),
    notifications,
    later: book,
    close: async () => {
      await notifications.idle()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

function headerOf(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => (body += chunk))
    request.on('end', () => resolve(body))
    request.on('error', reject)
  })
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  response.writeHead(status, { 'content-type': 'application/json;charset=utf-8', ...headers })
  response.end(text)
}
