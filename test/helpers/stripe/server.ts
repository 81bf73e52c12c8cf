// A Stripe-compatible API server for tests, on 127.0.0.1, that the service's Stripe processor reaches through the
// official SDK (STRIPE_API_URL). It follows Stripe's public documentation, not the adapter: bearer secret keys,
// form-encoded bodies (form.ts), PaymentIntents and Refunds (payment-intents.ts, refunds.ts), lists and a search
// that lags (lists.ts), Stripe's test payment methods (payment-methods.ts), and its idempotency
// (docs.stripe.com/api/idempotent_requests):
// - a POST's status and body are saved under its Idempotency-Key once the endpoint starts executing, and a retry
//   with the same key and parameters gets them again, with `Idempotent-Replayed: true`;
// - the same key with other parameters, or on another endpoint, is a 400 idempotency_error;
// - a key whose first request is still executing is a 409 idempotency_key_in_use;
// - a request refused before it executes (a parameter missing or wrong) saves nothing.
// Faults come on cue (fault()): drop the connection before acting or after, delay, answer 500 or 429.
// Every change is an Event, listed (GET /v1/events) and sent signed to the webhook endpoint, if one is set
// (webhooks.ts: dropped, doubled, held back or replayed on cue). What happens later at Stripe happens on cue too:
// the customer's authentication (also at the page next_action names), a bank debit settling, a dispute, a refund
// failing or made in the Dashboard, an authorization lapsing, an automatic payout (balance.ts: balance transactions
// with Stripe's fees, GET /v1/balance_transactions?payout=) arriving or failing.
// Connect (connect.ts): connected accounts, each with its own of all the above, reached with Stripe-Account; their
// events name them and go to Connect's endpoint (connect.webhooks); the platform's application fees on their payments
// and refunds (application-fees.ts), with the platform's own events and balance transactions.
// Everything it received is logged (requests) and every movement of money is in its ledger, for tests to count.
import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type Stripe from 'stripe'
import { listApplicationFees, retrieveApplicationFee } from './application-fees.js'
import { invalidRequest, StripeFailure } from './errors.js'
import { ConnectedAccounts } from './connect.js'
import { type Form, FormError, parseForm } from './form.js'
import { StripeLedger } from './ledger.js'
import type { Answer } from './lists.js'
import {
  cancelPaymentIntent,
  capturePaymentIntent,
  type Caller,
  closeDispute,
  completeAuthentication,
  createPaymentIntent,
  expireAuthorization,
  openDispute,
  settleBankDebit,
  listPaymentIntents,
  retrievePaymentIntent,
  searchPaymentIntents,
} from './payment-intents.js'
import { createPayout, listPayouts, retrievePayout } from './payouts.js'
import { createRefund, failRefund, listRefunds, refundFromDashboard, retrieveRefund } from './refunds.js'
import { listEvents, retrieveEvent } from './events.js'
import { type WebhookSender, webhookSender } from './webhooks.js'

export interface LoggedRequest {
  method: string
  path: string
  /** The Stripe-Account header: the connected account acted on; unset: the platform. */
  account: string | undefined
  idempotencyKey: string | undefined
  form: Form
  receivedAt: number
  /** The status answered; 'dropped' when the connection was cut instead. */
  outcome: number | 'dropped'
  replayed: boolean
}

export type Fault =
  /** The connection is cut before the request is acted on: nothing happened. */
  | { kind: 'drop-before' }
  /** The request is acted on (and its answer saved under its key), then the connection is cut. */
  | { kind: 'drop-after' }
  /**
   * The answer is held for `ms` after acting, or the request for `ms` before acting: it is then executing, and a
   * request under the same key meanwhile gets 409 idempotency_key_in_use.
   */
  | { kind: 'delay'; ms: number; when: 'before' | 'after' }
  /** An error answer before acting; `shouldRetry` sets Stripe-Should-Retry. Nothing happened, nothing is saved. */
  | { kind: 'error'; status: 429 | 500 | 503; shouldRetry?: boolean }

export interface FaultRule {
  method?: string
  path: RegExp
  fault: Fault
  /** How many matching requests it applies to. */
  times: number
}

export interface StripeTestServer {
  url: string
  secretKey: string
  ledger: StripeLedger
  requests: LoggedRequest[]
  /** Applies `fault` to the next `times` requests whose path matches (and method, if given). */
  fault(match: { method?: string; path: RegExp }, fault: Fault, times?: number): void
  /** Forgets the faults not applied yet. */
  clearFaults(): void
  /** The requests that were POSTs (money-moving or not), for counting calls. */
  posts(): LoggedRequest[]
  /** Its webhook endpoint, and the faults of its deliveries. */
  webhooks: WebhookSender
  /** What happens at Stripe after its answers, each told by its events. */
  later: {
    authenticate(paymentIntent: string, succeeded: boolean): Stripe.PaymentIntent
    settle(paymentIntent: string): Stripe.PaymentIntent
    dispute(paymentIntent: string): Stripe.Dispute
    closeDispute(paymentIntent: string, outcome: 'won' | 'lost'): Stripe.Dispute
    refundFromDashboard(paymentIntent: string, amount?: number, refundApplicationFee?: boolean): Stripe.Refund
    failRefund(refund: string): Stripe.Refund
    expireAuthorization(paymentIntent: string): Stripe.PaymentIntent
    /** Stripe's payout schedule, on cue: an automatic payout of what is available by `availableBy` (now). */
    payOut(options?: { currency?: string; availableBy?: Date }): Stripe.Payout | undefined
    /** The payout arrives at the bank, or fails. */
    settlePayout(payout: string, outcome: 'paid' | 'failed'): Stripe.Payout
  }
  /** Stripe Connect (connect.ts): connected accounts, each with its own objects, later events and balance. */
  connect: {
    /** A new connected account (as POST /v1/accounts makes one): its id. */
    create(): string
    /** Its objects and money, for tests that count them. */
    ledger(account: string): StripeLedger
    later(account: string): StripeTestServer['later']
    /** Connect's webhook endpoint: every connected account's events, each naming its `account`. */
    webhooks: WebhookSender
  }
  close(): Promise<void>
}

interface Saved {
  path: string
  fingerprint: string
  /** Unset while the first request under the key is executing. */
  answer?: { status: number; body: unknown }
}

type Route = {
  method: string
  pattern: RegExp
  /** `ledger`: the platform's, or the connected account's that the request's Stripe-Account header names. */
  handle: (ledger: StripeLedger, form: Form, caller: Caller, id: string) => Answer<unknown>
}

export async function startStripeServer(
  options: {
    secretKey?: string
    searchLagMs?: number
    port?: number /** Unset: bank debits settle only when a test says. */
    settleBankDebitsAfterMs?: number
    /** The account's card pricing: its fees on a payment and a dispute (unset: Stripe's standard, 2.9% + 30; 15.00). */
    cardPricing?: { percent: number; fixed: number; dispute: number }
  } = {},
): Promise<StripeTestServer> {
  const secretKey = options.secretKey ?? `sk_test_${randomBytes(12).toString('hex')}`
  const ledger = new StripeLedger(options.searchLagMs ?? 60_000, options.cardPricing)
  const requests: LoggedRequest[] = []
  const faults: FaultRule[] = []
  /** Responses saved under idempotency keys, each key the account's own: `${account}:${key}` ('' the platform's). */
  const saved = new Map<string, Saved>()
  const connect = new ConnectedAccounts((account) => {
    const connected = new StripeLedger(options.searchLagMs ?? 60_000, options.cardPricing, account, ledger)
    watch(connected, connectWebhooks)
    return connected
  })
  const routes: Route[] = [
    {
      method: 'POST',
      pattern: /^\/v1\/payment_intents$/,
      handle: (ledger, form, caller) => createPaymentIntent(ledger, form, caller),
    },
    { method: 'GET', pattern: /^\/v1\/payment_intents$/, handle: (ledger, form) => listPaymentIntents(ledger, form) },
    {
      method: 'GET',
      pattern: /^\/v1\/payment_intents\/search$/,
      handle: (ledger, form) => searchPaymentIntents(ledger, form),
    },
    {
      method: 'GET',
      pattern: /^\/v1\/payment_intents\/([^/]+)$/,
      handle: (ledger, form, _caller, id) => retrievePaymentIntent(ledger, id, form),
    },
    {
      method: 'POST',
      pattern: /^\/v1\/payment_intents\/([^/]+)\/capture$/,
      handle: (ledger, form, caller, id) => capturePaymentIntent(ledger, id, form, caller),
    },
    {
      method: 'POST',
      pattern: /^\/v1\/payment_intents\/([^/]+)\/cancel$/,
      handle: (ledger, form, caller, id) => cancelPaymentIntent(ledger, id, form, caller),
    },
    {
      method: 'POST',
      pattern: /^\/v1\/refunds$/,
      handle: (ledger, form, caller) => createRefund(ledger, form, caller),
    },
    { method: 'GET', pattern: /^\/v1\/refunds$/, handle: (ledger, form) => listRefunds(ledger, form) },
    {
      method: 'GET',
      pattern: /^\/v1\/refunds\/([^/]+)$/,
      handle: (ledger, form, _caller, id) => retrieveRefund(ledger, id, form),
    },
    {
      method: 'POST',
      pattern: /^\/v1\/payouts$/,
      handle: (ledger, form, caller) => createPayout(ledger, form, caller),
    },
    { method: 'GET', pattern: /^\/v1\/payouts$/, handle: (ledger, form) => listPayouts(ledger, form) },
    {
      method: 'GET',
      pattern: /^\/v1\/payouts\/([^/]+)$/,
      handle: (ledger, _form, _caller, id) => retrievePayout(ledger, id),
    },
    {
      method: 'GET',
      pattern: /^\/v1\/application_fees$/,
      handle: (ledger, form) => listApplicationFees(ledger, form),
    },
    {
      method: 'GET',
      pattern: /^\/v1\/application_fees\/([^/]+)$/,
      handle: (ledger, _form, _caller, id) => retrieveApplicationFee(ledger, id),
    },
    { method: 'GET', pattern: /^\/v1\/balance$/, handle: (ledger) => ledger.balance.retrieve() },
    { method: 'GET', pattern: /^\/v1\/balance_transactions$/, handle: (ledger, form) => ledger.balance.list(form) },
    {
      method: 'GET',
      pattern: /^\/v1\/balance_transactions\/([^/]+)$/,
      handle: (ledger, _form, _caller, id) => ledger.balance.retrieveOne(id),
    },
    { method: 'GET', pattern: /^\/v1\/events$/, handle: (ledger, form) => listEvents(ledger.events, form) },
    {
      method: 'GET',
      pattern: /^\/v1\/events\/([^/]+)$/,
      handle: (ledger, _form, _caller, id) => retrieveEvent(ledger.events, id),
    },
    { method: 'POST', pattern: /^\/v1\/accounts$/, handle: (_ledger, form) => connect.create(form) },
    {
      method: 'GET',
      pattern: /^\/v1\/accounts\/([^/]+)$/,
      handle: (_ledger, _form, _caller, id) => connect.retrieve(id),
    },
  ]
  const webhooks = webhookSender()
  // Connect's endpoint: the events of every connected account, each naming its account
  // (docs.stripe.com/connect/webhooks).
  const connectWebhooks = webhookSender()
  watch(ledger, webhooks)

  /** Sends a ledger's events to its endpoint, and settles its bank debits on time if told to. */
  function watch(watched: StripeLedger, sender: ReturnType<typeof webhookSender>): void {
    watched.events.onEmit((event) => sender.send(event))
    if (options.settleBankDebitsAfterMs === undefined) return
    const after = options.settleBankDebitsAfterMs
    watched.events.onEmit((event) => {
      if (event.type !== 'payment_intent.processing') return
      const id = (event.data.object as { id: string }).id
      setTimeout(() => {
        // As Stripe: a settlement that no longer applies (the payment was canceled) does not happen.
        watched.afterwards(() => settleBankDebit(watched, id))
        watched.runAfterwards()
      }, after).unref()
    })
  }

  const server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) send(response, 500, { error: { type: 'api_error', message: String(error) } })
    })
  })

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://stripe.test')
    const raw = await readBody(request)
    const idempotencyKey = headerOf(request, 'idempotency-key')
    const account = headerOf(request, 'stripe-account')
    let target = ledger
    const entry: LoggedRequest = {
      method: request.method ?? 'GET',
      path: url.pathname,
      account,
      idempotencyKey,
      form: {},
      receivedAt: Date.now(),
      outcome: 'dropped',
      replayed: false,
    }
    requests.push(entry)
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      entry.outcome = status
      send(response, status, body, headers)
      // What Stripe does shortly after this answer (a dispute, a refund failing) happens once it is sent.
      setImmediate(() => target.runAfterwards())
    }
    const authentication = /^\/test\/authenticate\/([^/]+)$/.exec(url.pathname)
    if (authentication) return authenticationPage(request, response, authentication[1]!, raw)
    if (bearerOf(request) !== secretKey) {
      return answer(401, {
        error: { type: 'invalid_request_error', message: `Invalid API Key provided: ${redacted(bearerOf(request))}` },
      })
    }
    let form: Form
    try {
      form = parseForm(request.method === 'GET' ? url.search.slice(1) : raw)
    } catch (error) {
      return answer(400, { error: { type: 'invalid_request_error', message: (error as Error).message } })
    }
    entry.form = form
    if (account !== undefined) {
      try {
        target = connect.ledgerOf(account, secretKey)
      } catch (error) {
        return answer((error as StripeFailure).status, { error: (error as StripeFailure).error })
      }
    }
    const found = routes
      .map((route) => ({ route, match: route.method === request.method ? route.pattern.exec(url.pathname) : null }))
      .find((candidate) => candidate.match)
    if (!found)
      return answer(404, {
        error: {
          type: 'invalid_request_error',
          message: `Unrecognized request URL (${request.method}: ${url.pathname}).`,
        },
      })

    const fault = takeFault(entry)
    if (fault?.kind === 'drop-before') return void request.socket.destroy()
    if (fault?.kind === 'error') {
      return answer(
        fault.status,
        {
          error: {
            type: fault.status === 429 ? 'invalid_request_error' : 'api_error',
            message: 'Simulated failure on cue.',
          },
        },
        fault.shouldRetry === undefined ? {} : { 'stripe-should-retry': String(fault.shouldRetry) },
      )
    }
    const caller: Caller = { idempotencyKey, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
    const run = async () => {
      if (fault?.kind === 'delay' && fault.when === 'before') await sleep(fault.ms)
      return execute(found.route, target, form, caller, found.match![1] ?? '')
    }
    const result =
      request.method === 'POST' && idempotencyKey !== undefined
        ? await idempotent(`${account ?? ''}:${idempotencyKey}`, url.pathname, form, run)
        : { ...(await run()), replayed: false }

    if (fault?.kind === 'drop-after') return void request.socket.destroy()
    if (fault?.kind === 'delay' && fault.when === 'after') await sleep(fault.ms)
    entry.replayed = result.replayed
    answer(result.status, result.body, result.replayed ? { 'idempotent-replayed': 'true' } : {})
  }

  /** The endpoint's answer; a refusal before it acted is marked so that it is not saved under the key. */
  function execute(
    route: Route,
    on: StripeLedger,
    form: Form,
    caller: Caller,
    id: string,
  ): { status: number; body: unknown; save: boolean } {
    try {
      const { status, body } = route.handle(on, form, caller, id)
      return { status, body, save: true }
    } catch (error) {
      if (error instanceof FormError) return { ...failure(invalidRequest(error.message)), save: false }
      if (!(error instanceof StripeFailure)) throw error
      // A card error happened while executing (the PaymentIntent exists, declined): saved. A parameter refused
      // before anything was created is not.
      return { ...failure(error), save: error.status === 402 }
    }
  }

  async function idempotent(
    scoped: string,
    path: string,
    form: Form,
    run: () => Promise<{ status: number; body: unknown; save: boolean }>,
  ) {
    const key = scoped.slice(scoped.indexOf(':') + 1)
    const fingerprint = createHash('sha256').update(canonical(form)).digest('hex')
    const earlier = saved.get(scoped)
    if (earlier && (earlier.path !== path || earlier.fingerprint !== fingerprint)) {
      return {
        ...failure(
          new StripeFailure(400, {
            type: 'idempotency_error',
            message:
              `Keys for idempotent requests can only be used with the same parameters they were first used with. Try ` +
              `using a key other than '${key}' if you meant to execute a different request.`,
          }),
        ),
        replayed: false,
      }
    }
    if (earlier && !earlier.answer) {
      return {
        ...failure(
          new StripeFailure(409, {
            type: 'invalid_request_error',
            code: 'idempotency_key_in_use',
            message:
              'There is currently another in-progress request using this Idempotent Key (that probably means you ' +
              'submitted twice, and the other request is still going through): ' +
              key +
              '. Please try again later.',
          }),
        ),
        replayed: false,
      }
    }
    if (earlier?.answer) return { ...earlier.answer, replayed: true }
    const entry: Saved = { path, fingerprint }
    saved.set(scoped, entry)
    const result = await run()
    if (result.save) entry.answer = { status: result.status, body: result.body }
    else saved.delete(scoped)
    return { status: result.status, body: result.body, replayed: false }
  }

  /**
   * The page a requires_action PaymentIntent's next_action.redirect_to_url points at, as Stripe's 3-D Secure test
   * page: GET shows it, POST result=succeeded|failed completes it and sends the browser to the return_url.
   */
  function authenticationPage(request: IncomingMessage, response: ServerResponse, id: string, raw: string): void {
    const owner = [ledger, ...connect.ledgers.values()].find((each) => each.paymentIntent(id)) ?? ledger
    const intent = owner.paymentIntent(id)
    if (!intent)
      return void response.writeHead(404, { 'content-type': 'text/plain' }).end(`No such payment_intent: ${id}`)
    if (request.method === 'GET') {
      const form = (result: string) =>
        `<form method="post"><input type="hidden" name="result" ` +
        `value="${result}"><button>${result === 'succeeded' ? 'Complete' : 'Fail'} authentication</button></form>`
      return void response
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          `<!doctype html><title>3D Secure test page</title><p>${intent.id}: ` +
            `${intent.status}</p>${form('succeeded')}${form('failed')}`,
        )
    }
    const returnUrl = intent.next_action?.redirect_to_url?.return_url ?? null
    try {
      completeAuthentication(owner, id, new URLSearchParams(raw).get('result') !== 'failed')
    } catch (error) {
      if (!(error instanceof StripeFailure)) throw error
      return void response.writeHead(400, { 'content-type': 'text/plain' }).end(error.message)
    }
    if (returnUrl) return void response.writeHead(303, { location: returnUrl }).end()
    response.writeHead(200, { 'content-type': 'text/plain' }).end(`${intent.id}: ${intent.status}`)
  }

  function takeFault(entry: LoggedRequest): Fault | undefined {
    const rule = faults.find(
      (candidate) =>
        (candidate.method === undefined || candidate.method === entry.method) && candidate.path.test(entry.path),
    )
    if (!rule) return undefined
    if (--rule.times === 0) faults.splice(faults.indexOf(rule), 1)
    return rule.fault
  }

  await new Promise<void>((resolve, reject) =>
    server.once('error', reject).listen(options.port ?? 0, '127.0.0.1', resolve),
  )
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    secretKey,
    ledger,
    requests,
    fault: (match, fault, times = 1) => void faults.push({ ...match, fault, times }),
    clearFaults: () => void faults.splice(0),
    posts: () => requests.filter((request) => request.method === 'POST'),
    webhooks,
    later: laterOf(ledger),
    connect: {
      create: () => connect.create({}).body.id,
      ledger: (account) => connect.ledgerOf(account, secretKey),
      later: (account) => laterOf(connect.ledgerOf(account, secretKey)),
      webhooks: connectWebhooks,
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** What happens at Stripe after its answers, on one account's objects (the platform's, or a connected one's). */
function laterOf(ledger: StripeLedger): StripeTestServer['later'] {
  return {
    authenticate: (paymentIntent, succeeded) => completeAuthentication(ledger, paymentIntent, succeeded),
    settle: (paymentIntent) => settleBankDebit(ledger, paymentIntent),
    dispute: (paymentIntent) => openDispute(ledger, retrievePaymentIntent(ledger, paymentIntent).body),
    closeDispute: (paymentIntent, outcome) => closeDispute(ledger, paymentIntent, outcome),
    refundFromDashboard: (paymentIntent, amount, refundApplicationFee) =>
      refundFromDashboard(ledger, paymentIntent, amount, refundApplicationFee),
    failRefund: (refund) => failRefund(ledger, refund),
    expireAuthorization: (paymentIntent) => expireAuthorization(ledger, paymentIntent),
    payOut: ({ currency = 'usd', availableBy = new Date() } = {}) =>
      ledger.balance.payOut(currency, Math.floor(availableBy.getTime() / 1000)),
    settlePayout: (payout, outcome) => ledger.balance.settle(payout, outcome),
  }
}

function failure(error: StripeFailure): { status: number; body: { error: Stripe.StripeRawError } } {
  return { status: error.status, body: { error: error.error } }
}

function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body)
  response.writeHead(status, {
    'content-type': 'application/json',
    'request-id': `req_${randomBytes(7).toString('hex')}`,
    'content-length': Buffer.byteLength(text),
    ...headers,
  })
  response.end(text)
}

async function readBody(request: IncomingMessage): Promise<string> {
  let body = ''
  for await (const chunk of request) body += chunk
  return body
}

function headerOf(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** Stripe takes the key as a bearer token, or as the user name of basic auth (curl -u sk_test_...:). */
function bearerOf(request: IncomingMessage): string | undefined {
  const header = headerOf(request, 'authorization') ?? ''
  if (header.startsWith('Bearer ')) return header.slice(7)
  if (header.startsWith('Basic ')) return Buffer.from(header.slice(6), 'base64').toString().split(':')[0]
  return undefined
}

function redacted(key: string | undefined): string {
  return key ? `${key.slice(0, 8)}${'*'.repeat(Math.max(0, key.length - 12))}${key.slice(-4)}` : '(none)'
}

/** The parameters in a fixed order: a retry that sends the same parameters has the same fingerprint. */
function canonical(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  return `{${Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
    .join(',')}}`
}
