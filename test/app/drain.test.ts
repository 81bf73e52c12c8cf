import { describe, expect, it } from 'vitest'
import { chargeBody, useTestApp } from '../helpers/app.js'
import { rawExchange } from '../helpers/http.js'
import { until } from '../helpers/system.js'

const suite = useTestApp()

describe('the HTTP edge', () => {
  it('when the request is not even valid HTTP, then the parser’s 400 is problem+json too', async () => {
    await suite.context.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = suite.context.app.server.address() as { port: number }
    const response = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n')

    const [head, body] = response.split('\r\n\r\n')
    expect(head).toMatch(/^HTTP\/1.1 400 Bad Request\r\n/)
    expect(head).toContain('Content-Type: application/problem+json; charset=utf-8')
    expect(JSON.parse(body!)).toEqual({
      type: 'https://payments.example.com/problems/malformed-request',
      title: 'The request is not valid HTTP or JSON',
      status: 400,
      detail: 'The request could not be parsed as HTTP.',
    })
  })

  it('when the app closes with a charge in flight, then the charge completes and its connection is closed after it', async () => {
    const { port } = suite.context.app.server.address() as { port: number }
    const body = JSON.stringify(chargeBody({ source: 'pm_card_slow' }))
    const exchange = rawExchange(
      port,
      `POST /v1/charges HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${suite.account.apiKey}\r\nIdempotency-Key: ` +
        `drain\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    )
    await until(async () => (await suite.context.sql`select 1 from idempotency_keys where key = 'drain'`).length === 1)
    const closed = suite.context.app.close()

    const response = await exchange // resolves when the server ends the connection
    expect(response).toMatch(/^HTTP\/1.1 201 Created\r\n/)
    expect(response).toContain('\r\nconnection: close\r\n')
    await closed
    const [row] = await suite.context
      .sql`select count(*)::int as count from charges where account_id = ${suite.account.id}`
    expect(row!.count).toBe(1)
  })
})
