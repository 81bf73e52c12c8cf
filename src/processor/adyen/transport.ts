// The official Adyen library's HTTP, pointed at another origin: its own client speaks only https to Adyen's hosts
// (checkout-test.adyen.com and the live prefixes), so an offline Adyen-compatible server (npm run adyen:test-server)
// is reached through the library's ClientInterface, the seam it offers for a client of one's own. Everything else
// (the request's shape, its headers, Idempotency-Key, the parsing of answers) is the library's; the errors are made
// as its own client makes them, so that a caller cannot tell the two apart. Production leaves ADYEN_API_URL unset
// and uses the library's client.
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { Client, Config } from '@adyen/api-library'
import { HttpClientException } from '@adyen/api-library'
import type { IRequest } from '@adyen/api-library/lib/src/typings/requestOptions.js'

/** The origin the library's Checkout URLs name in the test environment. */
export const ADYEN_TEST_ORIGIN = 'https://checkout-test.adyen.com'

/** The library's ClientInterface (the second argument of `new Client`), which its index does not export. */
export type AdyenTransport = NonNullable<ConstructorParameters<typeof Client>[1]>

export function transportTo(origin: string): AdyenTransport {
  return {
    request(
      endpoint: string,
      json: string | Buffer,
      config: Config,
      _isApiKeyRequired: boolean,
      options?: IRequest.Options,
    ) {
      const url = new URL(endpoint.replace(ADYEN_TEST_ORIGIN, origin.replace(/\/$/, '')))
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-api-key': config.apiKey ?? '',
        ...(options?.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
      }
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest
      return new Promise<string>((resolve, reject) => {
        const outgoing = send(url, { method: options?.method ?? 'POST', headers }, (response) => {
          let body = ''
          response.setEncoding('utf8')
          response.on('data', (chunk: string) => (body += chunk))
          response.on('end', () => {
            if (!response.complete)
              return reject(new Error('The connection was terminated while the message was still being sent'))
            const status = response.statusCode ?? 0
            if (status >= 200 && status < 300) return resolve(body)
            reject(errorOf(status, response.statusMessage ?? '', response.headers, body))
          })
          response.on('error', reject)
        })
        if (config.connectionTimeoutMillis)
          outgoing.setTimeout(config.connectionTimeoutMillis, () => outgoing.destroy(new Error('timeout')))
        outgoing.on('error', reject)
        outgoing.end(json)
      })
    },
  }
}

/** As the library's own client: an Adyen ServiceError becomes its apiError, anything else the status alone. */
function errorOf(status: number, statusMessage: string, headers: Record<string, unknown>, body: string): Error {
  try {
    const parsed = JSON.parse(body) as { status?: number; errorCode?: string; message?: string }
    if ('status' in parsed)
      return new HttpClientException({
        message: `HTTP Exception: ${parsed.status}. ${statusMessage}: ${parsed.message}`,
        statusCode: parsed.status,
        errorCode: parsed.errorCode,
        responseHeaders: headers as never,
        responseBody: body,
        apiError: parsed as never,
      })
  } catch {
    // not JSON: the status alone
  }
  return new HttpClientException({
    message: `HTTP Exception: ${status}. ${statusMessage}`,
    statusCode: status,
    responseHeaders: headers as never,
    responseBody: body,
  })
}
