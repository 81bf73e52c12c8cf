// Rate limits per account and, for failed authentication, per address; a 429 never touches an Idempotency-Key.
import { afterAll, describe, expect, it } from 'vitest'
import { chargeBody, setupTestApp, useTestApp } from '../helpers/app.js'
import { forwardingProxy, getFrom } from '../helpers/forwarding-proxy.js'

const suite = useTestApp({ config: { RATE_LIMIT_MAX: 3, AUTH_FAILURE_LIMIT: 2, RATE_LIMIT_WINDOW_SECONDS: 60 } })

const withKey = (key: string) => ({
  method: 'GET' as const,
  url: '/v1/charges',
  headers: { authorization: `Bearer ${key}` },
  remoteAddress: '10.0.0.9',
})

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
    const [row] = await suite.context
      .sql`select count(*)::int as count from idempotency_keys where account_id = ${spender.id}`
    expect(row!.count).toBe(0)
    const [charges] = await suite.context
      .sql`select count(*)::int as count from charges where account_id = ${spender.id}`
    expect(charges!.count).toBe(0)
  })
})

describe('per address, for failed authentication', () => {
  it('when an address fails authentication past the limit, then its failing requests get 429 instead of 401, its valid keys are still served, and other addresses are unaffected', async () => {
    const account = await suite.context.newAccount('Victim')
    expect((await suite.context.app.inject(withKey('sk_test_guess1'))).statusCode).toBe(401)
    expect((await suite.context.app.inject(withKey('sk_test_guess2'))).statusCode).toBe(401)

    const throttled = await suite.context.app.inject(withKey('sk_test_guess3'))
    expect(throttled.statusCode).toBe(429)
    expect(throttled.json().type).toMatch(/\/rate-limited$/)
    expect(throttled.headers['retry-after']).toBeTruthy()
    expect(throttled.headers['ratelimit-policy']).toBe('"auth-failures";q=2;w=60')
    // A right key from that address is served: the clients sharing an address are not locked out by one of them.
    expect((await suite.context.app.inject(withKey(account.apiKey))).statusCode).toBe(200)

    const elsewhere = await suite.context.app.inject({ ...withKey('sk_test_guess4'), remoteAddress: '10.0.0.10' })
    expect(elsewhere.statusCode).toBe(401)
  })

  it('when requests authenticate, then they never count as failures', async () => {
    const account = await suite.context.newAccount('Honest')
    for (let n = 0; n < 3; n++) {
      const response = await suite.context.app.inject({ ...withKey(account.apiKey), remoteAddress: '10.0.0.11' })
      expect(response.statusCode).not.toBe(429)
    }
  })
})

describe('behind a reverse proxy, over real sockets', () => {
  const limits = { RATE_LIMIT_MAX: 1000, AUTH_FAILURE_LIMIT: 2, RATE_LIMIT_WINDOW_SECONDS: 60 }
  const apps: Awaited<ReturnType<typeof setupTestApp>>[] = []
  const proxies: Awaited<ReturnType<typeof forwardingProxy>>[] = []
  async function behindProxy(config: Record<string, unknown>) {
    const context = await setupTestApp({ config: { ...limits, ...config } })
    apps.push(context)
    const proxy = await forwardingProxy(await context.app.listen({ port: 0, host: '127.0.0.1' }))
    proxies.push(proxy)
    const account = await context.newAccount()
    const get = (from: string, key: string) =>
      getFrom(from, `${proxy.url}/v1/charges`, { authorization: `Bearer ${key}` })
    return { get, apiKey: account.apiKey }
  }
  afterAll(async () => {
    for (const proxy of proxies) await proxy.close()
    for (const context of apps) await context.close()
  })

  it('when the proxy is not trusted, then every client shares its address, and one guessing keys locks nobody out', async () => {
    const { get, apiKey } = await behindProxy({})
    expect([await get('127.0.0.2', 'sk_test_bad1'), await get('127.0.0.2', 'sk_test_bad2')]).toEqual([401, 401])
    expect(await get('127.0.0.3', 'sk_test_typo')).toBe(429) // the proxy's address is over its limit
    expect(await get('127.0.0.3', apiKey)).toBe(200)
  })

  it('when the proxy is trusted (TRUST_PROXY, as docker-compose sets it), then each client is limited on its own', async () => {
    const { get, apiKey } = await behindProxy({ TRUST_PROXY: '1' })
    expect([
      await get('127.0.0.2', 'sk_test_bad1'),
      await get('127.0.0.2', 'sk_test_bad2'),
      await get('127.0.0.2', 'sk_test_bad3'),
    ]).toEqual([401, 401, 429])
    expect(await get('127.0.0.3', 'sk_test_typo')).toBe(401)
    expect(await get('127.0.0.2', apiKey)).toBe(200)
  })
})
