// API keys are random secrets shown once; only their SHA-256 is stored, so lookups stay one indexed read. A key
// says what it is (sk_test_... or sk_live_...), and has an id (key_...) to list and revoke it by.
import { createHash, randomBytes } from 'node:crypto'
import type { Sql, Transaction } from '../db/connect.js'
import type { ApiKeyCache } from './api-key-cache.js'
import type { PlatformPricing } from './platform-pricing.js'

export type KeyMode = 'test' | 'live'

export interface ApiKeyInfo {
  id: string
  /** The first characters of the key, enough to recognise it: sk_test_AbCd. */
  prefix: string
  created_at: string
  revoked_at: string | null
}

export function hashApiKey(apiKey: string): Buffer {
  return createHash('sha256').update(apiKey).digest()
}

export async function createAccount(
  sql: Sql,
  name: string,
  mode: KeyMode = 'test',
): Promise<{ account_id: string; api_key: string }> {
  const accountId = `acct_${randomBytes(12).toString('hex')}`
  const apiKey = await sql.begin(async (tx) => {
    await tx`insert into accounts (id, name) values (${accountId}, ${name})`
    return (await insertApiKey(tx as unknown as Sql, accountId, mode)).api_key
  })
  return { account_id: accountId, api_key: apiKey }
}

/** A new key for the account; its other keys keep working until revoked (rotation: create, deploy, revoke). */
export async function createApiKey(
  sql: Sql,
  accountId: string,
  mode: KeyMode = 'test',
): Promise<{ id: string; api_key: string } | undefined> {
  const [account] = await sql`select 1 from accounts where id = ${accountId}`
  return account ? insertApiKey(sql, accountId, mode) : undefined
}

async function insertApiKey(sql: Sql, accountId: string, mode: KeyMode): Promise<{ id: string; api_key: string }> {
  const prefix = `sk_${mode}_`
  const apiKey = prefix + randomBytes(24).toString('base64url')
  const id = `key_${randomBytes(12).toString('hex')}`
  await sql`insert into api_keys (id, key_hash, account_id, key_prefix)
            values (${id}, ${hashApiKey(apiKey)}, ${accountId}, ${apiKey.slice(0, prefix.length + 4)})`
  return { id, api_key: apiKey }
}

export async function listApiKeys(sql: Sql, accountId: string): Promise<ApiKeyInfo[]> {
  const rows = await sql<{ id: string; key_prefix: string; created_at: Date; revoked_at: Date | null }[]>`
    select id, key_prefix, created_at, revoked_at from api_keys where account_id = ${accountId} order by created_at`
  return rows.map((row) => ({
    id: row.id,
    prefix: row.key_prefix,
    created_at: row.created_at.toISOString(),
    revoked_at: row.revoked_at?.toISOString() ?? null,
  }))
}

/** Revokes the key; every instance refuses it within AUTH_CACHE_SECONDS. False when there is no such active key. */
export async function revokeApiKey(sql: Sql, keyId: string): Promise<boolean> {
  const { count } = await sql`update api_keys set revoked_at = now() where id = ${keyId} and revoked_at is null`
  return count === 1
}

/** The account a request is made for, as authentication finds it. */
export interface AuthenticatedAccount {
  id: string
  /** The connected account at the processor its new charges are made on (Stripe Connect); null: the platform's. */
  processorAccount: string | null
  /** The platform's fee on its charges made there, by currency (platform-pricing.ts); unset when it has none. */
  platformPricing?: PlatformPricing
}

export async function findAccountByApiKey(
  sql: Sql,
  apiKey: string,
  cache?: ApiKeyCache<AuthenticatedAccount>,
): Promise<AuthenticatedAccount | undefined> {
  const keyHash = hashApiKey(apiKey)
  const cached = cache?.get(keyHash.toString('base64'))
  if (cached) return cached
  const [row] = await sql<(AuthenticatedAccount & { platformPricing: PlatformPricing | null })[]>`
    select k.account_id as id, a.processor_account as "processorAccount",
      (select jsonb_object_agg(p.currency, jsonb_build_object('percentBasisPoints', p.percent_basis_points,
         'fixedAmount', p.fixed_amount))
       from platform_pricing p where p.account_id = a.id and a.processor_account is not null) as "platformPricing"
    from api_keys k join accounts a on a.id = k.account_id
    where k.key_hash = ${keyHash} and k.revoked_at is null`
  if (!row) return undefined
  const { platformPricing, ...account } = row
  const found: AuthenticatedAccount = platformPricing ? { ...account, platformPricing } : account
  cache?.set(keyHash.toString('base64'), found)
  return found
}

/**
 * Links the account to a connected account at the processor (null: unlinks it): its new charges are made there.
 * Refused, naming the other, when another account is linked to it: one connected account's money is one account's.
 */
export async function linkProcessorAccount(
  sql: Sql,
  accountId: string,
  processorAccount: string | null,
): Promise<AuthenticatedAccount | undefined> {
  try {
    const [account] = await sql<AuthenticatedAccount[]>`
      update accounts set processor_account = ${processorAccount} where id = ${accountId}
      returning id, processor_account as "processorAccount"`
    return account
  } catch (error) {
    if ((error as { code?: string }).code !== '23505') throw error
    const [other] = await sql<{ id: string }[]>`select id from accounts where processor_account = ${processorAccount}`
    throw new Error(`${processorAccount} is linked to account ${other?.id ?? '(another)'} already: unlink it first`)
  }
}

/** Every connected account an account is linked to: what the reconciliation reads besides the platform's. */
export async function linkedProcessorAccounts(sql: Sql): Promise<string[]> {
  const rows = await sql<{ processor_account: string }[]>`
    select processor_account from accounts where processor_account is not null order by processor_account`
  return rows.map((row) => row.processor_account)
}

/** The account a connected account is linked to, if any: whose books its events may change. */
export async function accountLinkedTo(sql: Sql | Transaction, processorAccount: string): Promise<string | undefined> {
  const [row] = await sql<{ id: string }[]>`select id from accounts where processor_account = ${processorAccount}`
  return row?.id
}
