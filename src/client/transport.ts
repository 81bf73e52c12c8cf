// One API call, attempted until it gets an answer worth returning: the same Idempotency-Key and the same body
// bytes on every attempt (serialised once, before the first), each attempt with its own timeout, the attempts and
// waits bounded by the retry policy. Returns the data with what the response said about itself, or throws a
// ProblemError (the API said no) or a ConnectionError (no readable answer came back).
import { ConnectionError, ProblemError, type ProblemBody } from './errors.js'
import { DEFAULT_RETRY_POLICY, delayBeforeRetry, isRetryable, parseRetryAfter, type RetryPolicy } from './retry.js'

export interface ClientOptions {
  /** Where the API is, without /v1: `https://payments.example.com`. */
  baseUrl: string
  /**
   * The account's secret key. `undefined` is accepted so `process.env.PAYMENTS_API_KEY` can be passed as it is,
   * and refused at once by createClient with a message, rather than sent as `Bearer undefined`.
   */
  apiKey: string | undefined
  retry?: Partial<RetryPolicy>
  /** Node's own fetch unless given (to instrument or proxy it). */
  fetch?: typeof globalThis.fetch
}

export interface CallOptions {
  /** Cancels the call, including its waits between attempts. */
  signal?: AbortSignal
  retry?: Partial<RetryPolicy>
}

export interface IdempotentCallOptions extends CallOptions {
  /** The operation's key. Omitted: one is generated for this call, and every retry of the call reuses it. */
  idempotencyKey?: string
}

export interface ApiResponse<T> {
  data: T
  status: number
  /** True when this is the stored response of an earlier request with the same key (Idempotent-Replayed). */
  replayed: boolean
  /** X-Request-Id of the attempt that answered. */
  requestId: string | undefined
  attempts: number
  idempotencyKey: string | undefined
}

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  path: string
  query?: object
  body?: unknown
  idempotencyKey?: string
}

export type Transport = <T>(request: ApiRequest, options?: CallOptions) => Promise<ApiResponse<T>>

/** An attempt with no readable answer: why, and whether the request may have reached the server. */
interface Unanswered {
  reason: string
  cause: unknown
  mayHaveArrived: boolean
}

type Attempt<T> =
  | { response: ApiResponse<T> }
  | { failure: ProblemError; retryable: boolean; retryAfterMs?: number | undefined }
  | { unanswered: Unanswered; retryable: true }

export function createTransport(options: ClientOptions): Transport {
  const base = options.baseUrl.replace(/\/+$/, '')
  const fetch = options.fetch ?? globalThis.fetch
  // A key left unset would be sent as "Bearer undefined" and answered 401 for every call: refused here instead.
  if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '')
    throw new TypeError(
      `createClient needs an apiKey (sk_test_... or sk_live_...); it got ${JSON.stringify(options.apiKey)}`,
    )
  const authorization = `Bearer ${options.apiKey}`

  return async function call<T>(request: ApiRequest, callOptions: CallOptions = {}): Promise<ApiResponse<T>> {
    const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry, ...callOptions.retry }
    const url = base + request.path + queryString(request.query)
    const init: RequestInit = {
      method: request.method,
      headers: {
        authorization,
        accept: 'application/json, application/problem+json',
        ...(request.body !== undefined && { 'content-type': 'application/json' }),
        ...(request.idempotencyKey !== undefined && { 'idempotency-key': headerValue(request.idempotencyKey) }),
      },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      redirect: 'manual',
    }
    const started = Date.now()
    let sent = false
    for (let attempt = 1; ; attempt++) {
      const remainingMs = policy.deadlineMs - (Date.now() - started)
      const timeout = AbortSignal.timeout(Math.max(1, Math.min(policy.attemptTimeoutMs, remainingMs)))
      const signal = callOptions.signal ? AbortSignal.any([callOptions.signal, timeout]) : timeout
      const info = { attempts: attempt, idempotencyKey: request.idempotencyKey }
      const result = await attemptOnce<T>(fetch, url, { ...init, signal }, info)
      if ('response' in result) return result.response
      callOptions.signal?.throwIfAborted() // the caller gave up: no more attempts
      if ('unanswered' in result) sent ||= result.unanswered.mayHaveArrived
      const failure =
        'failure' in result ? result.failure : connectionError(`${init.method} ${url}`, result.unanswered, info, sent)
      if (!result.retryable || attempt >= policy.maxAttempts) throw failure
      const delayMs = delayBeforeRetry(policy, attempt, 'failure' in result ? result.retryAfterMs : undefined)
      if (Date.now() - started + delayMs >= policy.deadlineMs) throw failure
      // Aborted while waiting: with the caller's reason.
      await sleep(delayMs, callOptions.signal).catch(() => callOptions.signal?.throwIfAborted())
    }
  }
}

/** Waits `ms`, or rejects as soon as `signal` aborts. No node: import: the client runs wherever fetch does. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

async function attemptOnce<T>(
  fetch: typeof globalThis.fetch,
  url: string,
  init: RequestInit,
  info: { attempts: number; idempotencyKey: string | undefined },
): Promise<Attempt<T>> {
  let status: number
  let headers: Headers
  let text: string
  try {
    const response = await fetch(url, init)
    ;({ status, headers } = response)
    text = await response.text()
  } catch (error) {
    if (error instanceof Error && error.name === 'TimeoutError')
      return { unanswered: { reason: 'the attempt timed out', cause: error, mayHaveArrived: true }, retryable: true }
    const code = codeOf(error)
    const neverLeft = code !== undefined && NEVER_CONNECTED.has(code)
    return {
      unanswered: {
        reason: `the connection failed${code ? ` (${code})` : ''}`,
        cause: error,
        mayHaveArrived: !neverLeft,
      },
      retryable: true,
    }
  }
  const requestId = headers.get('x-request-id') ?? undefined
  if (status >= 200 && status < 300) {
    let data: T
    try {
      data = (text === '' ? undefined : JSON.parse(text)) as T
    } catch (error) {
      return { unanswered: { reason: 'the answer was not JSON', cause: error, mayHaveArrived: true }, retryable: true }
    }
    const replayed = headers.get('idempotent-replayed') === 'true'
    return {
      response: { data, status, replayed, requestId, attempts: info.attempts, idempotencyKey: info.idempotencyKey },
    }
  }
  const failure = new ProblemError(problemOf(status, headers.get('content-type'), text), requestId, info)
  return {
    failure,
    retryable: isRetryable(status, failure.type),
    retryAfterMs: parseRetryAfter(headers.get('retry-after')),
  }
}

/** Failures of the connection itself, before any byte of the request could be sent: nothing listens, no such host. */
const NEVER_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
])

/** The system's error code under fetch's TypeError ("fetch failed"), where the platform gives one. */
function codeOf(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown; errors?: { code?: unknown }[] } } | null)?.cause
  const code = cause?.code ?? cause?.errors?.[0]?.code
  return typeof code === 'string' ? code : undefined
}

function connectionError(
  call: string,
  last: Unanswered,
  info: { attempts: number; idempotencyKey: string | undefined },
  requestSent: boolean,
): ConnectionError {
  const outcome = !requestSent
    ? '; no attempt reached the server (is it running there?), so nothing was done'
    : info.idempotencyKey !== undefined
      ? '; the outcome is unknown: call again with the same idempotency key to settle it'
      : ''
  return new ConnectionError(`${call}: ${last.reason} before an answer came back${outcome}`, last.cause, {
    ...info,
    requestSent,
  })
}

/** The problem+json body, or one made up from the status when the answer was something else (a proxy's page). */
function problemOf(status: number, contentType: string | null, text: string): ProblemBody {
  if (contentType?.includes('json')) {
    try {
      const body = JSON.parse(text) as ProblemBody
      if (typeof body?.type === 'string' && typeof body.detail === 'string') return { ...body, status }
    } catch {
      // not JSON after all: described below
    }
  }
  return { type: 'about:blank', title: `HTTP ${status}`, status, detail: text.slice(0, 500) }
}

/** A key that begins with a double quote goes as a structured-field string, so the server reads it back as is. */
function headerValue(key: string): string {
  return key.startsWith('"') ? `"${key.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"` : key
}

function queryString(query: object | undefined): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) params.append(name, String(value))
  const text = params.toString()
  return text ? `?${text}` : ''
}
