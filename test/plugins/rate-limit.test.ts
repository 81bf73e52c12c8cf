// Rate limits per account and, for failed authentication, per address; a 429 never touches an Idempotency-Key.
import { describe, expect, it } from 'vitest'
import { chargeBody, useTestApp } from '../helpers/app.js'

const suite = useTestApp({ config: { RATE_LIMIT_MAX: 3, AUTH_FAILURE_LIMIT: 2, RATE_LIMIT_WINDOW_SECONDS: 60 } })

const withKey = (key: string) => ({ method: 'GET' as const, url: '/v1/charges', headers: { authorization: `Bearer ${key}` }, remoteAddress: '10.0.0.9' })

describe('per account', () => {
  it('when an account exceeds its limit, then 429 problem+json with Retry-After and RateLimit headers, and other accounts go on', async () => {
    const busy = await suite.context.newAccount('Busy')
    const first = await busy.get('/v1/charges')
    expect(first.statusCode).toBe(200)
    expect(first.headers['ratelimit-policy']).toBe('"account";q=3;w=60')
    expect(first.headers.ratelimit).toMatch(/^"account";r=2;t=\d+$/)
    await busy.get('/v1/charges')
    await busy.get('/v1/charges')

    const refused = await busy.get('/v1/charges')
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['content-type']).toBe('application/problem+json; charset=utf-8')
    expect(refused.json().type).toMatch(/\/rate-limited$/)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect(refused.headers.ratelimit).toMatch(/^"account";r=0;t=\d+$/)

    const other = await suite.context.newAccount('Other')
    expect((await other.get('/v1/charges')).statusCode).toBe(200)
  })

  it('when a POST with an Idempotency-Key is rate limited, then the key is not recorded and the processor not called', async () => {
    const spender = await suite.context.newAccount('Spender')
    for (let n = 0; n < 3; n++) await spender.get('/v1/charges')
    const refused = await spender.post('/v1/charges', chargeBody(), { key: 'limited' })
    expect(refused.statusCode).toBe(429)
    const [row] = await suite.context.sql`select count(*)::int as count from idempotency_keys where account_id = ${spender.id}`
    expect(row!.count).toBe(0)
    const [charges] = await suite.context.sql`select count(*)::int as count from charges where account_id = ${spender.id}`
    expect(charges!.count).toBe(0)
  })
})

describe('per address, for failed authentication', () => {
  it('when an address fails authentication past the limit, then it gets 429 instead of 401, and other addresses are unaffected', async () => {
    const account = await suite.context.newAccount('Victim')
    expect((await suite.context.app.inject(withKey('sk_test_guess1'))).statusCode).toBe(401)
    expect((await suite.context.app.inject(withKey('sk_test_guess2'))).statusCode).toBe(401)

    const throttled = await suite.context.app.inject(withKey('sk_test_guess3'))
    expect(throttled.statusCode).toBe(429)
    expect(throttled.json().type).toMatch(/\/rate-limited$/)
    expect(throttled.headers['retry-after']).toBeTruthy()
    expect(throttled.headers['ratelimit-policy']).toBe('"auth-failures";q=2;w=60')
    // Even a right key from that address waits: the address is what is being throttled.
    expect((await suite.context.app.inject(withKey(account.apiKey))).statusCode).toBe(429)

    const elsewhere = await suite.context.app.inject({ ...withKey(account.apiKey), remoteAddress: '10.0.0.10' })
    expect(elsewhere.statusCode).toBe(200)
  })

  it('when requests authenticate, then they never count as failures', async () => {
    const account = await suite.context.newAccount('Honest')
    for (let n = 0; n < 3; n++) {
      const response = await suite.context.app.inject({ ...withKey(account.apiKey), remoteAddress: '10.0.0.11' })
      expect(response.statusCode).not.toBe(429)
    }
  })
})
