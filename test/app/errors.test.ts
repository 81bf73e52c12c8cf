import { describe, expect, it } from 'vitest'
import { chargeBody, useTestApp } from '../helpers/app.js'
import type { ProblemBody } from '../../src/schemas/problem-types.js'

const suite = useTestApp()

function expectProblem(
  response: { statusCode: number; headers: Record<string, unknown>; json(): ProblemBody },
  status: number,
  type?: RegExp,
) {
  expect(response.statusCode).toBe(status)
  expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8')
  const problem = response.json()
  expect(problem).toEqual(
    expect.objectContaining({
      status,
      title: expect.any(String),
      detail: expect.any(String),
      type: expect.any(String),
    }),
  )
  if (type) expect(problem.type).toMatch(type)
  return problem
}

describe('every error is application/problem+json', () => {
  it('when the JSON is malformed, then 400', async () => {
    expectProblem(await suite.account.post('/v1/charges', '{"amount_cents": 10,'), 400)
  })

  it('when the body is empty, then 400', async () => {
    expectProblem(await suite.account.post('/v1/charges', ''), 400)
  })

  it('when the body is not an object, then 400 validation-failed', async () => {
    expectProblem(await suite.account.post('/v1/charges', '[1,2]'), 400, /\/validation-failed$/)
  })

  it('when the content type is not JSON, then 415 saying what to send', async () => {
    const problem = expectProblem(
      await suite.account.post('/v1/charges', 'amount=10', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      415,
    )
    expect(problem.detail).toBe(
      'The body must be JSON: send Content-Type: application/json (this request sent ' +
        '"application/x-www-form-urlencoded").',
    )
  })

  it('when a currency is unknown or upper case, then 400 names the allowed ones, or says they are lower case', async () => {
    const detail = async (body: Record<string, unknown>) =>
      expectProblem(await suite.account.post('/v1/charges', chargeBody(body)), 400, /\/validation-failed$/).detail
    expect(await detail({ currency: 'xyz' })).toBe(
      'body/currency must be one of: usd, eur, gbp, cad, aud, chf, jpy, sek, nok, dkk (not "xyz")',
    )
    expect(await detail({ currency: 'USD' })).toBe('body/currency must be lower case: usd, not USD')
    expect(await detail({ currency: 'x'.repeat(41) })).toBe(
      'body/currency must be one of: usd, eur, gbp, cad, aud, chf, jpy, sek, nok, dkk',
    )
    const listed = await suite.account.get('/v1/balance_transactions?type=Charge')
    expect(listed.json().detail).toBe('querystring/type must be lower case: charge, not Charge')
  })

  it('when the body has a field the request does not take, then 400 naming that field, once', async () => {
    const problem = expectProblem(
      await suite.account.post('/v1/charges', chargeBody({ amount: 10 })),
      400,
      /\/validation-failed$/,
    )
    expect(problem).toMatchObject({
      detail: 'body/amount is not a field this request takes',
      errors: [{ location: 'body/amount', message: 'is not a field this request takes' }],
    })
    expect(problem.errors).toHaveLength(1)
  })

  it('when the body is larger than 64 KiB, then 413', async () => {
    expectProblem(await suite.account.post('/v1/charges', chargeBody({ description: 'x'.repeat(70_000) })), 413)
  })

  it('when the route does not exist, then 404 route-not-found', async () => {
    const problem = expectProblem(await suite.context.app.inject({ method: 'GET', url: '/v2/nothing?x=1' }), 404)
    expect(problem).toEqual({
      type: 'https://payments.example.com/problems/route-not-found',
      title: 'No such route',
      status: 404,
      detail: 'No route for GET /v2/nothing',
    })
  })

  it.each([
    ['DELETE', '/v1/charges', 'GET, HEAD, POST'],
    ['PUT', '/v1/charges/ch_000000000000000000000000', 'GET, HEAD'],
    ['TRACE', '/v1/charges', 'GET, HEAD, POST'],
    ['GET', '/v1/charges/ch_000000000000000000000000/capture', 'POST'],
    ['PATCH', '/v1/webhook_endpoints', 'GET, HEAD, POST'],
    // A method with a body no route takes is refused for its method, before its body is looked at.
    ['QUERY', '/v1/charges', 'GET, HEAD, POST'],
  ])(
    'when %s %s, a path that takes other methods, then 405 method-not-allowed with Allow: %s',
    async (method, url, allow) => {
      const response = await suite.context.app.inject({
        method: method as 'GET',
        url,
        headers: { authorization: `Bearer ${suite.account.apiKey}` },
      })
      expectProblem(response, 405, /\/method-not-allowed$/)
      expect(String(response.headers.allow).split(', ').sort().join(', ')).toBe(allow)
    },
  )

  it('when the body is empty with a JSON content type, then 400 validation-failed, a documented type', async () => {
    expectProblem(await suite.account.post('/v1/charges', ''), 400, /\/validation-failed$/)
  })

  it('when no API key is sent, then 401 unauthorized with WWW-Authenticate', async () => {
    const response = await suite.context.app.inject({ method: 'GET', url: '/v1/charges' })
    const problem = expectProblem(response, 401, /\/unauthorized$/)
    expect(response.headers['www-authenticate']).toBe('Bearer realm="payments"')
    expect(problem.detail).toBe('No API key: send it as "Authorization: Bearer sk_test_...".')
  })

  it('when the header carries an unset variable ("Bearer undefined"), then the 401 says the key is missing, not revoked', async () => {
    const response = await suite.context.app.inject({
      method: 'GET',
      url: '/v1/charges',
      headers: { authorization: 'Bearer undefined' },
    })
    expect(expectProblem(response, 401, /\/unauthorized$/).detail).toContain(
      'the Authorization header carries the word "undefined" (is the variable that holds the key set?)',
    )
  })

  it('when the API key is wrong or malformed, then 401', async () => {
    for (const authorization of [
      'Bearer sk_test_nope',
      'Basic abc',
      'Bearer',
      `Bearer ${suite.account.apiKey} extra`,
    ]) {
      expectProblem(
        await suite.context.app.inject({ method: 'GET', url: '/v1/charges', headers: { authorization } }),
        401,
        /\/unauthorized$/,
      )
    }
  })

  it('when the API key is revoked, then 401', async () => {
    const revoked = await suite.context.newAccount('Revoked')
    await suite.context.sql`update api_keys set revoked_at = now() where account_id = ${revoked.id}`
    expectProblem(await revoked.get('/v1/charges'), 401, /\/unauthorized$/)
  })

  it("when the charge id is malformed, then 400 as openapi.yaml's pattern says; when unknown, 404; never 500", async () => {
    expectProblem(await suite.account.get('/v1/charges/not-an-id'), 400, /\/validation-failed$/)
    expectProblem(await suite.account.get(`/v1/charges/${'x'.repeat(65)}`), 400, /\/validation-failed$/)
    expectProblem(await suite.account.get(`/v1/charges/ch_${'0'.repeat(24)}`), 404, /\/resource-not-found$/)
  })

  it('when something unexpected breaks, then 500 without its message, and the request id to quote', async () => {
    const failing = await suite.context.newAccount('Failing')
    // Break the database for this account only: charges for it can no longer be inserted.
    await suite.context.sql`create or replace function fail_insert() returns trigger language plpgsql as $$
      begin raise exception 'secret internal detail'; end $$`
    await suite.context.sql.unsafe(`create trigger fail_for_account before insert on charges for each row
      when (new.account_id = '${failing.id}') execute function fail_insert()`)
    const response = await failing.post('/v1/charges', chargeBody(), { key: 'breaks' })
    await suite.context.sql`drop trigger fail_for_account on charges`

    const problem = expectProblem(response, 500)
    expect(JSON.stringify(problem)).not.toContain('secret')
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    // The failed work was rolled back and the key released: the retry charges.
    const retry = await failing.post('/v1/charges', chargeBody(), { key: 'breaks' })
    expect(retry.statusCode).toBe(201)
  })
})

describe('requests ids', () => {
  it('when a caller sends X-Request-Id, then the response echoes it', async () => {
    const response = await suite.context.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'trace-abc.1' },
    })
    expect(response.headers['x-request-id']).toBe('trace-abc.1')
  })
})

describe('health', () => {
  it('when the process is up, then /healthz and /readyz answer 200', async () => {
    expect((await suite.context.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' })
    expect((await suite.context.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ok' })
  })
})
