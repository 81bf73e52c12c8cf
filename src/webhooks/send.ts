// The one HTTP request of a delivery attempt, sent to the address that was checked (src/webhooks/urls.ts) and no
// other: the connection never resolves the host again, while TLS still verifies the certificate for the host
// name and Host names it. No redirects are followed; the answer is read only as far as its excerpt.
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { LookupFunction } from 'node:net'
import type { WebhookTarget } from './urls.js'

export interface SentAttempt {
  status: number
  excerpt: string | null
  retryAfter: string | null
}

export class DeliveryTimeoutError extends Error {
  override name = 'TimeoutError'
}

export function sendToTarget(
  target: WebhookTarget,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; excerptChars: number },
): Promise<SentAttempt> {
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all)
      return (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [
        { address: target.address, family: target.family },
      ])
    callback(null, target.address, target.family)
  }
  const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const outgoing = send(
      target.url,
      { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, lookup: pinned },
      (answer) => {
        readExcerpt(answer, options.excerptChars).then(
          (excerpt) => resolve({ status: answer.statusCode ?? 0, excerpt, retryAfter: header(answer, 'retry-after') }),
          reject,
        )
      },
    )
    const timer = setTimeout(
      () => outgoing.destroy(new DeliveryTimeoutError(`timed out after ${options.timeoutMs} ms`)),
      options.timeoutMs,
    )
    outgoing.on('close', () => clearTimeout(timer))
    outgoing.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    outgoing.end(body)
  })
}

/** The first characters of the body, without reading more of it than that needs. */
async function readExcerpt(answer: IncomingMessage, chars: number): Promise<string | null> {
  let text = ''
  answer.setEncoding('utf8')
  for await (const chunk of answer) {
    text += chunk as string
    if (text.length >= chars) break
  }
  answer.destroy()
  return text.slice(0, chars) || null
}

function header(answer: IncomingMessage, name: string): string | null {
  const value = answer.headers[name]
  return typeof value === 'string' ? value : null
}
