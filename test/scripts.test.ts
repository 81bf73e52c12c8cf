// The scripts a user runs, against real databases: the server's URL, and the embedded default.
import { existsSync } from 'node:fs'
import { readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { findAccountByApiKey, linkProcessorAccount } from '../src/accounts/api-keys.js'
import { WHERE_FILE } from '../src/db/embedded.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'
import { runNpmScript, startServer } from './helpers/processes.js'
import { freePort, scratchDir, until } from './helpers/system.js'

// Each npm script is a process of its own, compiling its TypeScript as it starts (several seconds beside three other
// test files on two cores), and a test here runs up to six of them and starts servers: 33 s alone, past 60 s
// under CI's load. The bound only decides how long a failing test takes.
vi.setConfig({ testTimeout: 240_000 })

let database: TestDatabase

beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(() => database.drop())

const ACCOUNT_LINE = /^\{"account_id":"acct_[0-9a-f]{24}","api_key":"sk_test_[A-Za-z0-9_-]{32}"\}\n$/

describe('npm run account:create', () => {
  it('when given a name, then it prints one JSON line and stores only a hash of the key', async () => {
    const { code, stdout } = await runNpmScript(['account:create', '--', '--name', 'Acme Ltd'], {
      DATABASE_URL: database.url,
    })

    expect(code).toBe(0)
    expect(stdout).toMatch(ACCOUNT_LINE)
    const { account_id: accountId, api_key: apiKey } = JSON.parse(stdout)
    const [account] = await database.sql`select name from accounts where id = ${accountId}`
    expect(account).toEqual({ name: 'Acme Ltd' })
    const keys = await database.sql`select key_hash, key_prefix from api_keys where account_id = ${accountId}`
    expect(keys).toHaveLength(1)
    expect(keys[0]!.key_prefix).toBe(apiKey.slice(0, 12))
    expect(JSON.stringify(keys)).not.toContain(apiKey)
  })

  it('when the name is missing, then it exits 2 with usage', async () => {
    const { code, stderr, stdout } = await runNpmScript(['account:create'], { DATABASE_URL: database.url })
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toContain('usage')
  })
})

describe('npm run account:link', () => {
  it('when an account is linked to a connected account, then authentication carries the link; another account cannot take it; unlinking frees it', async () => {
    const create = async (name: string) =>
      JSON.parse((await runNpmScript(['account:create', '--', '--name', name], { DATABASE_URL: database.url })).stdout)
    const [first, second] = [await create('Linked'), await create('Second')]
    const onStripe = {
      DATABASE_URL: database.url,
      PROCESSOR: 'stripe',
      STRIPE_SECRET_KEY: `sk_test_${'link'.repeat(24)}`,
    }
    const link = (account: string, ...rest: string[]) =>
      runNpmScript(['account:link', '--', '--account', account, ...rest], onStripe)
    // The simulated processor has no connected accounts: a link there is refused.
    const simulated = await runNpmScript(
      ['account:link', '--', '--account', first.account_id, '--processor-account', 'acct_1ConnectedAbc'],
      { DATABASE_URL: database.url },
    )
    expect(simulated).toMatchObject({
      code: 1,
      stderr: 'account:link: PROCESSOR is simulated: only Stripe has connected accounts to link to\n',
    })
    const linked = await link(first.account_id, '--processor-account', 'acct_1ConnectedAbc')
    expect(linked).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(linked.stdout)).toEqual({ id: first.account_id, processorAccount: 'acct_1ConnectedAbc' })
    expect(await findAccountByApiKey(database.sql, first.api_key)).toEqual({
      id: first.account_id,
      processorAccount: 'acct_1ConnectedAbc',
    })
    const taken = await link(second.account_id, '--processor-account', 'acct_1ConnectedAbc')
    expect(taken).toMatchObject({
      code: 1,
      stderr: `account:link: acct_1ConnectedAbc is linked to account ${first.account_id} already: unlink it first\n`,
    })
    expect((await link(first.account_id, '--unlink')).code).toBe(0)
    expect((await link(second.account_id, '--processor-account', 'acct_1ConnectedAbc')).code).toBe(0)
    expect(await findAccountByApiKey(database.sql, first.api_key)).toEqual({
      id: first.account_id,
      processorAccount: null,
    })
    // The service on another processor, with an account linked: it says so, and does not start.
    await expect(startServer({ DATABASE_URL: database.url, PROCESSOR: 'simulated' })).rejects.toThrow(
      'PROCESSOR is simulated, but 1 account(s) are linked to Stripe connected accounts (acct_1ConnectedAbc): run ' +
        'with PROCESSOR=stripe, or unlink them',
    )
    expect((await link(second.account_id, '--unlink')).code).toBe(0)
  })

  it('when the processor account is not a Stripe account id, or both --unlink and one are given, then it exits 2 with usage', async () => {
    for (const args of [['--processor-account', 'ch_123'], ['--unlink', '--processor-account', 'acct_1A'], []]) {
      const { code, stderr } = await runNpmScript(['account:link', '--', '--account', 'acct_x', ...args], {
        DATABASE_URL: database.url,
      })
      expect(code).toBe(2)
      expect(stderr).toContain('usage')
    }
  })
})

describe('npm run account:platform-fee, platform:fees', () => {
  it('when the operator prices a linked account’s payments, then authentication carries the price; removed, it does not; an unlinked account pays none', async () => {
    const created = JSON.parse(
      (await runNpmScript(['account:create', '--', '--name', 'Priced'], { DATABASE_URL: database.url })).stdout,
    )
    const price = (...rest: string[]) =>
      runNpmScript(['account:platform-fee', '--', '--account', created.account_id, ...rest], {
        DATABASE_URL: database.url,
      })
    const set = await price('--currency', 'usd', '--percent-basis-points', '150', '--fixed-amount', '25')
    expect(set).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(set.stdout)).toEqual({
      account: created.account_id,
      currency: 'usd',
      price: { percentBasisPoints: 150, fixedAmount: 25 },
    })
    // Priced but not linked: its charges are the platform's own, and pay no fee.
    expect(await findAccountByApiKey(database.sql, created.api_key)).toEqual({
      id: created.account_id,
      processorAccount: null,
    })
    await linkProcessorAccount(database.sql, created.account_id, 'acct_1PricedAbc')
    try {
      expect(await findAccountByApiKey(database.sql, created.api_key)).toEqual({
        id: created.account_id,
        processorAccount: 'acct_1PricedAbc',
        platformPricing: { usd: { percentBasisPoints: 150, fixedAmount: 25 } },
      })
      expect((await price('--currency', 'usd', '--remove')).code).toBe(0)
      expect(await findAccountByApiKey(database.sql, created.api_key)).toEqual({
        id: created.account_id,
        processorAccount: 'acct_1PricedAbc',
      })
    } finally {
      await linkProcessorAccount(database.sql, created.account_id, null)
    }
    const stranger = await runNpmScript(
      ['account:platform-fee', '--', '--account', 'acct_nobody', '--currency', 'usd', '--remove'],
      { DATABASE_URL: database.url },
    )
    expect(stranger).toMatchObject({ code: 1, stderr: 'account:platform-fee: no account acct_nobody\n' })
    for (const args of [
      ['--currency', 'usd', '--percent-basis-points', '10001', '--fixed-amount', '0'],
      ['--currency', 'USD', '--percent-basis-points', '100', '--fixed-amount', '0'],
      ['--currency', 'usd', '--percent-basis-points', '100'],
      ['--currency', 'usd', '--remove', '--fixed-amount', '1'],
    ]) {
      const { code, stderr } = await price(...args)
      expect(code, args.join(' ')).toBe(2)
      expect(stderr).toContain('usage')
    }
    // Nothing collected yet: the platform's books print no line.
    expect(await runNpmScript(['platform:fees'], { DATABASE_URL: database.url })).toMatchObject({
      code: 0,
      stdout: '',
    })
    expect(
      (await runNpmScript(['platform:fees', '--', '--since', 'yesterday'], { DATABASE_URL: database.url })).code,
    ).toBe(2)
    // The simulated processor takes no fees for a platform: nothing to compare with.
    expect(await runNpmScript(['platform:fees', '--', '--compare'], { DATABASE_URL: database.url })).toMatchObject({
      code: 1,
      stderr: 'platform:fees: PROCESSOR is simulated: it takes no fees for the platform\n',
    })
  })
})

describe('API keys: key:create, key:list, key:revoke', () => {
  it('when a key is rotated, then both work until the old one is revoked, which every instance refuses within AUTH_CACHE_SECONDS', async () => {
    const created = JSON.parse(
      (await runNpmScript(['account:create', '--', '--name', 'Rotating'], { DATABASE_URL: database.url })).stdout,
    )
    const server = await startServer({ DATABASE_URL: database.url, AUTH_CACHE_SECONDS: '1' })
    try {
      const status = async (apiKey: string) =>
        (await fetch(`${server.url}/v1/charges`, { headers: { authorization: `Bearer ${apiKey}` } })).status
      expect(await status(created.api_key)).toBe(200) // now cached on this instance

      const rotated = await runNpmScript(['key:create', '--', '--account', created.account_id], {
        DATABASE_URL: database.url,
      })
      expect(rotated.code).toBe(0)
      const fresh = JSON.parse(rotated.stdout)
      expect(fresh).toMatchObject({
        key_id: expect.stringMatching(/^key_[0-9a-f]{24}$/),
        api_key: expect.stringMatching(/^sk_test_/),
      })
      expect(await status(fresh.api_key)).toBe(200)
      expect(await status(created.api_key)).toBe(200)

      const listed = (
        await runNpmScript(['key:list', '--', '--account', created.account_id], { DATABASE_URL: database.url })
      ).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
      expect(listed).toHaveLength(2)
      expect(JSON.stringify(listed)).not.toContain(fresh.api_key)
      const old = listed.find((key) => key.id !== fresh.key_id)
      expect(old).toMatchObject({ prefix: created.api_key.slice(0, 12), revoked_at: null })

      const revoked = await runNpmScript(['key:revoke', '--', '--key', old.id], { DATABASE_URL: database.url })
      expect(JSON.parse(revoked.stdout)).toEqual({
        key_id: old.id,
        revoked: true,
        refused_everywhere_within_seconds: 5,
      })
      // Refused within the bound the command states (this instance caches a key for 1 s).
      await until(async () => (await status(created.api_key)) === 401, 5000)
      expect(await status(fresh.api_key)).toBe(200)
      expect((await runNpmScript(['key:revoke', '--', '--key', old.id], { DATABASE_URL: database.url })).code).toBe(1)
    } finally {
      server.child.kill('SIGKILL')
    }
  })

  it('when the arguments are wrong, then it exits 2 with usage', async () => {
    const { code, stderr } = await runNpmScript(['key:create', '--', '--account', 'nope'], {
      DATABASE_URL: database.url,
    })
    expect(code).toBe(2)
    expect(stderr).toContain('usage')
  })

  it('when an id names nothing, then it says so and exits 1; with --field, the value alone is printed', async () => {
    const revoke = await runNpmScript(['key:revoke', '--', '--key', 'key_nope'], { DATABASE_URL: database.url })
    expect({ code: revoke.code, stderr: revoke.stderr.trim() }).toEqual({
      code: 1,
      stderr: 'key:revoke: no active key key_nope',
    })
    const field = await runNpmScript(['account:create', '--', '--name', 'Field', '--field', 'api_key'], {
      DATABASE_URL: database.url,
    })
    expect(field.stdout).toMatch(/^sk_test_[A-Za-z0-9_-]{32}\n$/)
  })

  it('when the deployment is live, then keys are sk_live_', async () => {
    const { stdout } = await runNpmScript(['account:create', '--', '--name', 'Live'], {
      DATABASE_URL: database.url,
      API_KEY_MODE: 'live',
    })
    expect(JSON.parse(stdout).api_key).toMatch(/^sk_live_[A-Za-z0-9_-]{32}$/)
  })
})

describe('npm run migrate', () => {
  it('when the schema is current, then it says so and applies nothing', async () => {
    const { code, stdout } = await runNpmScript(['migrate'], { DATABASE_URL: database.url })
    expect(code).toBe(0)
    const result = JSON.parse(stdout)
    expect(result).toMatchObject({ applied: [], current: expect.stringMatching(/^\d{4}_.*\.sql$/) })
    expect(result.database).not.toContain('postgres:postgres@')
  })
})

describe('npm run reap', () => {
  it('when keys have expired, then it deletes them once and prints the count', async () => {
    const [account] = await database.sql`select id from accounts limit 1`
    await database.sql`
      insert into idempotency_keys (account_id, endpoint, key, fingerprint, operation_id, completed_at,
        response_status, response_headers, response_body, expires_at)
      select ${account!.id}, 'POST /v1/charges', 'expired-' || n, decode(repeat('00', 32), 'hex'), gen_random_uuid(),
             now() - interval '2 hours', 201, '{}', '\\x7b7d', now() - interval '1 hour'
      from generate_series(1, 3) n`
    const { code, stdout } = await runNpmScript(['reap'], { DATABASE_URL: database.url })
    expect(code).toBe(0)
    expect(JSON.parse(stdout)).toEqual({ deleted: 3 })
  })
})

describe('npm run smoke', () => {
  it('when no server answers at the URL, then it fails at once with a clear message, not a row of ok', async () => {
    const url = `http://127.0.0.1:${await freePort()}`
    const { code, stdout, stderr } = await runNpmScript(['smoke', '--', url], {})
    expect(code).toBe(1)
    expect(stdout).not.toContain('ok')
    expect(stderr).toContain(`no ready server answers at ${url}`)
  })
})

describe('with DATABASE_URL unset (the embedded default)', () => {
  let dataDir: string
  let env: Record<string, string>

  beforeAll(async () => {
    dataDir = await scratchDir('payments-data-')
    env = { DATABASE_URL: '', DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(await freePort()) }
  })
  afterAll(() => rm(dataDir, { recursive: true, force: true }))

  it('when the server is stopped or running, then account:create uses the same database, and the key works', async () => {
    const before = await runNpmScript(['account:create', '--', '--name', 'Before'], env)
    expect(before.stdout).toMatch(ACCOUNT_LINE)

    const server = await startServer(env)
    try {
      const during = await runNpmScript(['account:create', '--', '--name', 'During'], env)
      expect(during.stdout).toMatch(ACCOUNT_LINE)
      for (const { api_key: apiKey } of [JSON.parse(before.stdout), JSON.parse(during.stdout)]) {
        const response = await fetch(`${server.url}/v1/charges`, { headers: { authorization: `Bearer ${apiKey}` } })
        expect(response.status).toBe(200)
      }
      const ready = await fetch(`${server.url}/readyz`)
      expect(ready.status).toBe(200)
    } finally {
      server.child.kill('SIGTERM')
    }
    const code = await server.exited
    expect({ code, output: code === 0 ? '' : server.output() }).toEqual({ code: 0, output: '' })
  })

  it('when db:reset runs, then it refuses while this checkout’s server runs, and afterwards removes the cluster DATA_DIR names', async () => {
    const created = await runNpmScript(['account:create', '--', '--name', 'Gone'], env)
    const { api_key: oldKey } = JSON.parse(created.stdout)
    const cluster = (await readFile(join(dataDir, WHERE_FILE), 'utf8')).split('\n')[0]!
    expect(existsSync(join(cluster, 'PG_VERSION'))).toBe(true)

    const server = await startServer(env)
    const refused = await runNpmScript(['db:reset'], env)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('is running')
    expect(existsSync(join(cluster, 'PG_VERSION'))).toBe(true)
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)

    const reset = await runNpmScript(['db:reset'], env)
    expect(reset.code, reset.stderr).toBe(0)
    expect(JSON.parse(reset.stdout)).toEqual({ removed: cluster })
    expect(existsSync(cluster)).toBe(false)
    expect(existsSync(join(dataDir, WHERE_FILE))).toBe(false)

    // The next start begins empty: the old key is unknown there.
    const fresh = await startServer(env)
    try {
      expect((await fetch(`${fresh.url}/v1/charges`, { headers: { authorization: `Bearer ${oldKey}` } })).status).toBe(
        401,
      )
    } finally {
      fresh.child.kill('SIGTERM')
      await fresh.exited
    }
  })
})
