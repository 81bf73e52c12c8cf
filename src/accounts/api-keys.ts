// API keys are random secrets shown once; only their SHA-256 is stored, so lookups stay one indexed read.
import { createHash, randomBytes } from 'node:crypto'
import type { Sql } from '../db/connect.js'
import type { ApiKeyCache } from './api-key-cache.js'

export const API_KEY_PREFIX = 'sk_test_'

export function hashApiKey(apiKey: string): Buffer {
  return createHash('sha256').update(apiKey).digest()
}

export async function createAccount(sql: Sql, name: string): Promise<{ account_id: string; api_key: string }> {
  const accountId = `acct_${randomBytes(12).toString('hex')}`
  const apiKey = API_KEY_PREFIX + randomBytes(24).toString('base64url')
  await sql.begin(async (tx) => {
    await tx`insert into accounts (id, name) values (${accountId}, ${name})`
    await tx`insert into api_keys (key_hash, account_id, key_prefix)
             values (${hashApiKey(apiKey)}, ${accountId}, ${apiKey.slice(0, API_KEY_PREFIX.length + 4)})`
  })
  return { account_id: accountId, api_key: apiKey }
}

export async function findAccountByApiKey(sql: Sql, apiKey: string, cache?: ApiKeyCache): Promise<{ id: string } | undefined> {
  const keyHash = hashApiKey(apiKey)
  const cached = cache?.get(keyHash.toString('base64'))
  if (cached) return { id: cached }
  const [account] = await sql<{ id: string }[]>`
    select account_id as id from api_keys where key_hash = ${keyHash} and revoked_at is null`
  if (account) cache?.set(keyHash.toString('base64'), account.id)
  return account
}
