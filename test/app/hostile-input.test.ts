// Input the database would refuse or rewrite is refused first, as a 400, before the processor is called.
import { describe, expect, it } from 'vitest'
import { chargeBody, controllableProcessor, countCharges, useTestApp } from '../helpers/app.js'
import { parseRawResponse, rawExchange, rawRequest } from '../helpers/http.js'
import type { ProblemBody } from '../../src/schemas/problem-types.js'

const recorder = controllableProcessor()
const suite = useTestApp({ processor: recorder.factory })

const HOSTILE = {
  nul: 'a\u0000b',
  'lone high surrogate': 'a\ud800b',
  'lone low surrogate': '\udc00',
  'reversed pair': '\udc00\ud800',
}

const hostileBodies = Object.entries(HOSTILE).flatMap(([name, text]) => [
  [`description with ${name}`, chargeBody({ description: text })],
  [`metadata value with ${name}`, chargeBody({ metadata: { order: text } })],
  [`metadata key with ${name}`, chargeBody({ metadata: { [text]: 'x' } })],
  [`source with ${name}`, chargeBody({ source: text })],
  [`currency with ${name}`, chargeBody({ currency: text })],
  [`unknown field named with ${name}`, { ...chargeBody(), [text]: 1 }],
]) as [string, Record<string, unknown>][]

async function listen(): Promise<number> {
  if (!suite.context.app.server.listening) await suite.context.app.listen({ port: 0, host: '127.0.0.1' })
  return (suite.context.app.server.address() as { port: number }).port
}

function expectProblem(
  response: { statusCode: number; headers: Record<string, unknown>; json(): ProblemBody },
  status: number,
  type?: RegExp,
) {
  expect(response.statusCode).toBe(status)
  expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8')
  if (type) expect(response.json().type).toMatch(type)
}

describe('strings the database would refuse or rewrite', () => {
  it.each(hostileBodies)(
    'when the %s, then 400 validation-failed, nothing is stored, and the processor is not called',
    async (_case, body) => {
      const callsBefore = recorder.calls.length
      const chargesBefore = await countCharges(suite.context.sql, suite.account.id)
      const response = await suite.account.post('/v1/charges', body)

      expectProblem(response, 400, /\/validation-failed$/)
      expect(response.body).not.toContain('\u0000')
      expect(recorder.calls.length).toBe(callsBefore)
      expect(await countCharges(suite.context.sql, suite.account.id)).toBe(chargesBefore)
    },
  )

  it('when every field of a charge gets every hostile value in turn, then the processor is called only for a 2xx or a 402', async () => {
    const fields = ['description', 'source', 'currency'] as const
    for (const text of Object.values(HOSTILE)) {
      for (const field of fields) {
        const callsBefore = recorder.calls.length
        const response = await suite.account.post('/v1/charges', chargeBody({ [field]: text }))
        if (!(response.statusCode < 300 || response.statusCode === 402))
          expect(recorder.calls.length, `${field}=${JSON.stringify(text)}`).toBe(callsBefore)
        expect(response.statusCode).toBeLessThan(500)
      }
    }
  })

  it('when the hostile body is fixed and sent again under the same key, then it is charged', async () => {
    const refused = await suite.account.post('/v1/charges', chargeBody({ description: 'a\u0000' }), {
      key: 'fix-hostile',
    })
    const fixed = await suite.account.post('/v1/charges', chargeBody({ description: 'a' }), { key: 'fix-hostile' })
    expect(refused.statusCode).toBe(400)
    expect(fixed.statusCode).toBe(201)
  })

  it('when a well-formed surrogate pair (an emoji) is sent, then it is stored and returned unchanged', async () => {
    const response = await suite.account.post(
      '/v1/charges',
      chargeBody({ description: 'paid \ud83d\ude00', metadata: { note: '\u00e9t\u00e9' } }),
    )
    expect(response.statusCode).toBe(201)
    expect(response.json().description).toBe('paid \ud83d\ude00')
    expect((await suite.account.get(`/v1/charges/${response.json().id}`)).json().metadata).toEqual({
      note: '\u00e9t\u00e9',
    })
  })

  it('when a refund is posted with a hostile body field name, then 400 and no refund call', async () => {
    const charge = (await suite.account.post('/v1/charges', chargeBody())).json()
    const callsBefore = recorder.calls.length
    expectProblem(
      await suite.account.post(`/v1/charges/${charge.id}/refunds`, { 'amount\u0000': 1 }),
      400,
      /\/validation-failed$/,
    )
    expect(recorder.calls.length).toBe(callsBefore)
  })
})

describe('paths and query strings', () => {
  it.each([
    ['GET', '/v1/charges/%00'],
    ['GET', '/v1/refunds/%00'],
    ['POST', '/v1/charges/%00/refunds'],
    ['GET', '/v1/charges?starting_after=%00'],
  ])('when %s %s carries a NUL, then 400 problem+json, never a 500', async (method, url) => {
    const response = await suite.context.app.inject({
      method: method as 'GET' | 'POST',
      url,
      headers: {
        authorization: `Bearer ${suite.account.apiKey}`,
        'idempotency-key': `nul-${method}`,
        'content-type': 'application/json',
      },
      ...(method === 'POST' && { payload: '{}' }),
    })
    expectProblem(response, 400)
  })

  it.each([['/v1/charges/%zz'], ['/v1/charges/%ED%A0%80'], ['/v1/refunds/%E0%A4%A']])(
    'when the path %s is not valid percent-encoded UTF-8, then 400 problem+json',
    async (url) => {
      const port = await listen()
      const response = parseRawResponse(
        await rawExchange(
          port,
          rawRequest(`GET ${url} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${suite.account.apiKey}`),
        ),
      )
      expect(response.status).toBe(400)
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8')
      expect(JSON.parse(response.body)).toMatchObject({
        status: 400,
        type: 'https://payments.example.com/problems/malformed-request',
      })
    },
  )

  it.each([['limit=0x10'], ['limit=1e1'], ['limit=%205'], ['limit=5.0'], ['limit=+5'], ['limit=05'], ['limit=']])(
    'when the query is %s, then 400: numbers are plain decimal integers',
    async (query) => {
      expectProblem(await suite.account.get(`/v1/charges?${query}`), 400, /\/validation-failed$/)
    },
  )

  it('when the query is a plain decimal integer, then it is used', async () => {
    const response = await suite.account.get('/v1/charges?limit=2')
    expect(response.statusCode).toBe(200)
    expect(response.json().data.length).toBeLessThanOrEqual(2)
  })
})

describe('the HTTP edge', () => {
  it('when an HTTP/1.1 request has no Host header, then 400 problem+json', async () => {
    const port = await listen()
    const response = parseRawResponse(await rawExchange(port, rawRequest('GET /healthz HTTP/1.1')))
    expect(response.status).toBe(400)
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8')
    expect(JSON.parse(response.body).detail).toContain('Host')
  })

  it('when a JSON body declares a charset other than UTF-8, then 415', async () => {
    const response = await suite.account.post('/v1/charges', chargeBody(), {
      headers: { 'content-type': 'application/json; charset=iso-8859-1' },
    })
    expectProblem(response, 415)
  })

  it('when a JSON body declares UTF-8 in any spelling, then it is accepted', async () => {
    for (const contentType of [
      'application/json; charset=utf-8',
      'application/json;charset="UTF-8"',
      'application/json; charset=utf8',
    ]) {
      expect(
        (await suite.account.post('/v1/charges', chargeBody(), { headers: { 'content-type': contentType } }))
          .statusCode,
      ).toBe(201)
    }
  })

  it('when the body is not valid UTF-8, then 400 and the processor is not called', async () => {
    const port = await listen()
    const callsBefore = recorder.calls.length
    const body = Buffer.concat([
      Buffer.from('{"amount_cents":100,"currency":"usd","source":"pm_card_visa","description":"'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}'),
    ])
    const raw = await rawExchange(
      port,
      rawRequest(
        `POST /v1/charges HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${suite.account.apiKey}\r\nIdempotency-Key: ` +
          `bad-utf8\r\nContent-Type: application/json`,
        body,
      ),
    )
    const response = parseRawResponse(raw)
    expect(response.status).toBe(400)
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8')
    expect(recorder.calls.length).toBe(callsBefore)
  })

  it('when two Idempotency-Key header lines are sent, then 400 idempotency-key-invalid and nothing is charged', async () => {
    const port = await listen()
    const before = await countCharges(suite.context.sql, suite.account.id)
    const raw = await rawExchange(
      port,
      rawRequest(
        `POST /v1/charges HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${suite.account.apiKey}\r\nIdempotency-Key: ` +
          `a\r\nidempotency-key: b\r\nContent-Type: application/json`,
        JSON.stringify(chargeBody()),
      ),
    )
    const response = parseRawResponse(raw)
    expect(response.status).toBe(400)
    expect(JSON.parse(response.body).type).toMatch(/\/idempotency-key-invalid$/)
    expect(await countCharges(suite.context.sql, suite.account.id)).toBe(before)
  })

  it('when the Bearer scheme is written in any case, then the key is accepted', async () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer ']) {
      const response = await suite.context.app.inject({
        method: 'GET',
        url: '/v1/charges',
        headers: { authorization: `${scheme} ${suite.account.apiKey}` },
      })
      expect(response.statusCode, scheme).toBe(200)
    }
  })

  it('when any response leaves, then it says no-store, nosniff and carries a request id', async () => {
    for (const response of [
      await suite.account.get('/v1/charges'),
      await suite.context.app.inject({ method: 'GET', url: '/nowhere' }),
    ]) {
      expect(response.headers['cache-control']).toBe('no-store')
      expect(response.headers['x-content-type-options']).toBe('nosniff')
      expect(response.headers['x-request-id']).toBeTruthy()
      expect(response.headers['strict-transport-security']).toBeUndefined()
    }
  })
})

describe('keys JavaScript takes for the prototype', () => {
  // Sent as text: an object literal with a __proto__ key would set the prototype, not send the key.
  const charge = `{"amount_cents":100,"currency":"usd","source":"pm_card_visa"`
  it.each([
    ['a metadata key __proto__', `${charge},"metadata":{"__proto__":"x"}}`],
    ['a metadata key __proto__ spelled with an escape', `${charge},"metadata":{"\\u005f_proto__":"x"}}`],
    ['a top-level key __proto__', `${charge},"__proto__":{"amount_cents":1}}`],
    ['a constructor key holding a prototype', `${charge},"metadata":{"constructor":{"prototype":{}}}}`],
  ])('when the body has %s, then 400 validation-failed naming the key, and nothing is charged', async (_case, body) => {
    const callsBefore = recorder.calls.length
    const chargesBefore = await countCharges(suite.context.sql, suite.account.id)
    const response = await suite.account.post('/v1/charges', body)
    expectProblem(response, 400, /\/validation-failed$/)
    expect(response.json().detail).toContain('__proto__')
    expect(recorder.calls.length).toBe(callsBefore)
    expect(await countCharges(suite.context.sql, suite.account.id)).toBe(chargesBefore)
  })

  it('when a metadata key is named constructor or prototype with a string value, then it is stored and returned', async () => {
    const response = await suite.account.post(
      '/v1/charges',
      `${charge},"metadata":{"constructor":"a","prototype":"b"}}`,
    )
    expect(response.statusCode, response.body).toBe(201)
    expect(response.json().metadata).toEqual({ constructor: 'a', prototype: 'b' })
  })

  it('when the JSON itself is broken, then it is still malformed-request', async () => {
    const response = await suite.account.post('/v1/charges', `${charge},"metadata":{"__proto__":}}`)
    expectProblem(response, 400, /\/malformed-request$/)
  })
})

describe('deeply nested JSON', () => {
  const nested = (open: string, close: string, depth: number, inner = '1') =>
    open.repeat(depth) + inner + close.repeat(depth)
  const chargeWith = (field: string) => `{"amount_cents":100,"currency":"usd","source":"pm_card_visa",${field}}`
  it.each([
    ['an array 30,000 deep as the body', '/v1/charges', nested('[', ']', 30_000)],
    ['an object 6,000 deep as the body', '/v1/charges', nested('{"a":', '}', 6_000)],
    ['metadata 10,000 deep', '/v1/charges', chargeWith(`"metadata":${nested('{"a":', '}', 10_000, '"x"')}`)],
    ['a refund body 20,000 deep', '/v1/charges/ch_000000000000000000000000/refunds', nested('[', ']', 20_000)],
  ])('when %s is posted, then 400 validation-failed, never a 500', async (_case, url, body) => {
    const response = await suite.account.post(url, body)
    expectProblem(response, 400, /\/validation-failed$/)
    expect(response.json().detail).toContain('nests deeper than 32')
  })

  it('when brackets sit inside strings, then they do not count as nesting', async () => {
    const response = await suite.account.post(
      '/v1/charges',
      chargeBody({ description: '['.repeat(100) + '\\"{'.repeat(50) }),
    )
    expect(response.statusCode).toBe(201)
  })
})
