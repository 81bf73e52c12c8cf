// The scripts a user runs, against real databases: the server's URL, and the embedded default.
import { rm } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'
import { runNpmScript, startServer } from './helpers/processes.js'
import { freePort, scratchDir } from './helpers/system.js'

let database: TestDatabase

beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(() => database.drop())

const ACCOUNT_LINE = /^\{"account_id":"acct_[0-9a-f]{24}","api_key":"sk_test_[A-Za-z0-9_-]{32}"\}\n$/

describe('npm run account:create', () => {
  it('when given a name, then it prints one JSON line and stores only a hash of the key', async () => {
    const { code, stdout } = await runNpmScript(['account:create', '--', '--name', 'Acme Ltd'], { DATABASE_URL: database.url })

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

describe('npm run reap', () => {
  it('when keys have expired, then it deletes them once and prints the count', async () => {
    const [account] = await database.sql`select id from accounts limit 1`
    await database.sql`
      insert into idempotency_keys (account_id, endpoint, key, fingerprint, operation_id, claim_token, locked_until, expires_at)
      select ${account!.id}, 'POST /v1/charges', 'expired-' || n, decode(repeat('00', 32), 'hex'), gen_random_uuid(),
             gen_random_uuid(), now(), now() - interval '1 hour'
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
    expect(await server.exited).toBe(0)
  })
})
