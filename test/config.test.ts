// Configuration is checked once, at start-up: wrong or contradictory values stop the process with one line.
import { describe, expect, it } from 'vitest'
import { readFile } from 'node:fs/promises'
import { ConfigError, loadConfig, SETTINGS } from '../src/config.js'
import { startServer } from './helpers/processes.js'

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as Error).message
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`)
}

describe('loadConfig', () => {
  it('when a setting exists, then the configuration table of docs/operations.md gives it', async () => {
    const table = (await readFile(new URL('../docs/operations.md', import.meta.url), 'utf8')).split(
      '## Configuration',
    )[1]!
    const documented = new Set([...table.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((match) => match[1]!))
    expect(
      SETTINGS.filter((name) => !documented.has(name)).map(
        (name) => `${name} is not in docs/operations.md's configuration table`,
      ),
    ).toEqual([])
  })

  it('when nothing is set, then every default holds together', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      PORT: 3000,
      IDEMPOTENCY_TTL_SECONDS: 86_400,
      IDEMPOTENCY_LEASE_SECONDS: 30,
      REQUEST_TIMEOUT_MS: 4000,
    })
    expect(config.DATABASE_URL).toBeUndefined()
  })

  it.each([['1.5'], ['0x10'], ['1e3'], ['12abc'], ['-3']])(
    'when a whole number is given as %s, then it is refused, not truncated or guessed',
    (value) => {
      expect(refusal({ IDEMPOTENCY_LEASE_SECONDS: value })).toContain('IDEMPOTENCY_LEASE_SECONDS')
    },
  )

  it('when an enum is wrong, then the message lists the allowed values', () => {
    expect(refusal({ LOG_LEVEL: 'verbose' })).toBe(
      'invalid configuration: LOG_LEVEL must be one of: fatal, error, warn, info, debug, trace, silent',
    )
  })

  it('when the TTL is shorter than or close to the lease, then it is refused', () => {
    expect(refusal({ IDEMPOTENCY_TTL_SECONDS: '30', IDEMPOTENCY_LEASE_SECONDS: '30' })).toContain(
      'IDEMPOTENCY_TTL_SECONDS (30) must be at least',
    )
    expect(refusal({ IDEMPOTENCY_TTL_SECONDS: '100', IDEMPOTENCY_LEASE_SECONDS: '30' })).toContain('here 180')
    expect(
      loadConfig({ IDEMPOTENCY_TTL_SECONDS: '180', IDEMPOTENCY_LEASE_SECONDS: '30' }).IDEMPOTENCY_TTL_SECONDS,
    ).toBe(180)
  })

  it('when the lease is shorter than a request may run, then it is refused', () => {
    expect(refusal({ IDEMPOTENCY_LEASE_SECONDS: '2', REQUEST_TIMEOUT_MS: '5000' })).toContain(
      'must not be shorter than REQUEST_TIMEOUT_MS',
    )
  })

  it('when the recovery grace is not longer than a processor call may take, then it is refused', () => {
    expect(refusal({ RECOVERY_GRACE_SECONDS: '0' })).toContain('RECOVERY_GRACE_SECONDS')
    expect(refusal({ RECOVERY_GRACE_SECONDS: '10', PROCESSOR_TIMEOUT_MS: '10000' })).toContain(
      'must be longer than PROCESSOR_TIMEOUT_MS (10000 ms)',
    )
    expect(loadConfig({ RECOVERY_GRACE_SECONDS: '11', PROCESSOR_TIMEOUT_MS: '10000' }).RECOVERY_GRACE_SECONDS).toBe(11)
  })

  it('when settlement would count as behind before a dead worker is found and a scheduled run has come, then it is refused', () => {
    expect(refusal({ WORKER_DEAD_AFTER_SECONDS: '60', SETTLEMENT_BEHIND_SECONDS: '120' })).toContain(
      'SETTLEMENT_BEHIND_SECONDS (120) must be longer than WORKER_DEAD_AFTER_SECONDS (60) plus 60',
    )
    expect(
      loadConfig({ WORKER_DEAD_AFTER_SECONDS: '60', SETTLEMENT_BEHIND_SECONDS: '121' }).SETTLEMENT_BEHIND_SECONDS,
    ).toBe(121)
  })

  it('when PROCESSOR=stripe has no usable key, or would move real money unasked, or send the key in the clear, then it is refused', () => {
    expect(refusal({ PROCESSOR: 'stripe' })).toContain('PROCESSOR=stripe needs STRIPE_SECRET_KEY')
    expect(refusal({ PROCESSOR: 'stripe', STRIPE_SECRET_KEY: 'pk_test_abcdefghijkl' })).toContain(
      'STRIPE_SECRET_KEY must begin sk_test_ (or rk_test_ for a restricted key, sk_live_ for a live one); it ' +
        'begins "pk_": that is a publishable key',
    )
    expect(refusal({ PROCESSOR: 'stripe', STRIPE_SECRET_KEY: 'sk_test_short' })).toContain(
      'STRIPE_SECRET_KEY is cut short: sk_test_ is followed by 5 characters',
    )
    expect(refusal({ PROCESSOR: 'stripe', STRIPE_SECRET_KEY: 'sk_test_abcdefghijkl…' })).toContain(
      'STRIPE_SECRET_KEY has "…" after sk_test_',
    )
    expect(refusal({ PROCESSOR: 'stripe', STRIPE_SECRET_KEY: 'sk_live_abcdefghijkl' })).toContain(
      'a live key, which moves real money: say so with API_KEY_MODE=live',
    )
    expect(refusal({ PROCESSOR: 'stripe', STRIPE_SECRET_KEY: 'sk_test_abcdefghijkl', API_KEY_MODE: 'live' })).toContain(
      'live clients would be charged nothing',
    )
    expect(
      refusal({
        PROCESSOR: 'stripe',
        STRIPE_SECRET_KEY: 'sk_test_abcdefghijkl',
        STRIPE_API_URL: 'http://stripe.example.com',
      }),
    ).toContain('would send the secret key unencrypted')
    expect(
      loadConfig({ PROCESSOR: 'stripe', STRIPE_SECRET_KEY: 'sk_live_abcdefghijkl', API_KEY_MODE: 'live' }).PROCESSOR,
    ).toBe('stripe')
    expect(
      loadConfig({
        PROCESSOR: 'stripe',
        STRIPE_SECRET_KEY: 'sk_test_abcdefghijkl',
        STRIPE_API_URL: 'http://127.0.0.1:12111',
      }).STRIPE_API_URL,
    ).toBe('http://127.0.0.1:12111')
  })

  it("when DATABASE_URL asks for sslmode prefer or allow, then it is refused: the worker's driver cannot fall back to plain text", () => {
    const formation = 'postgres://payments@node1:5432,node2:5432/payments?target_session_attrs=read-write'
    expect(refusal({ DATABASE_URL: `${formation}&sslmode=prefer` })).toContain(
      'say sslmode=require (encrypted) or sslmode=disable',
    )
    expect(refusal({ DATABASE_URL: `${formation}&sslmode=prefer` })).toContain(
      'pg_autoctl show uri prints prefer for nodes made with --no-ssl: write disable there',
    )
    expect(refusal({ DATABASE_URL: `${formation}&sslmode=allow` })).toContain('sslmode=allow')
    expect(loadConfig({ DATABASE_URL: `${formation}&sslmode=require` }).DATABASE_URL).toContain('node2:5432')
  })

  it('when several values are wrong, then each is named', () => {
    const message = refusal({ PORT: 'http', DATABASE_URL: 'mysql://x' })
    expect(message).toContain('PORT')
    expect(message).toContain('DATABASE_URL')
  })
})

describe('the server with a bad configuration', () => {
  it('when started, then it exits 1 with one log line naming the problem, and no stack trace', async () => {
    const failed = startServer({ IDEMPOTENCY_TTL_SECONDS: '10', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' })
    const error = await failed.then(
      () => undefined,
      (reason: Error) => reason,
    )
    expect(error?.message).toContain('server exited with 1')
    const lines = error!.message.split('\n').filter((line) => line.startsWith('{'))
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0]!)).toMatchObject({
      level: 60,
      msg: expect.stringContaining('IDEMPOTENCY_TTL_SECONDS (10)'),
    })
    expect(error!.message).not.toContain('    at ')
  })
})
