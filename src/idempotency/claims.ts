// Claiming keys: the statement that claims (or reads) the keys of many concurrent requests at once, and the
// rules that turn what it found into a claim, a replay, a 409 or a 422.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Sql } from '../db/connect.js'
import { Batcher, type SharedStatements } from '../db/batcher.js'
import type { ClaimResult, KeyScope, Timing } from './store.js'

// A claim races only with a release, a takeover or an expiry between two statements; a few rounds settle it.
const CLAIM_ROUNDS = 3
// A duplicate that finds its twin still running looks again a few times, for 150 ms in all, before it answers
// 409: a request that is committing finishes in milliseconds, and its duplicates then replay instead of failing.
const IN_FLIGHT_WAITS_MS = [5, 10, 20, 35, 80]

/** What the claim statement found of a key: the claim it inserted, or the key as it was. */
type KeyRow = { inserted: true; id: string; operation_id: string } | ExistingKey

/** A key that existed: unsettled (its claim held, or let go), or completed with its response. */
type ExistingKey = {
  inserted: false
  id: string
  operation_id: string
  fingerprint: Buffer
  claim_token: string | null
  expired: boolean
  lease_over: boolean
} & (
  | { completed_at: null }
  | {
      completed_at: Date
      expires_in_ms: number
      response_status: number
      response_headers: Record<string, string>
      response_body: Buffer
    }
)

interface ClaimAttempt {
  scope: KeyScope
  fingerprint: Buffer
  token: string
  /** The validated request, as JSON text, kept for the recovery worker; null when the endpoint is not recovered. */
  request: string | null
}

// The most claims one statement carries. Twenty connections rarely queue more; the cap keeps a burst's statement
// (and the time its first request waits) short.
const MAX_CLAIMS_PER_STATEMENT = 50

/**
 * Claims keys for requests, or says why not. Claims that arrive while one statement is in flight go out together
 * in the next (src/db/batcher.ts): one statement and one commit for all of them.
 */
export class KeyClaims {
  readonly #sql: Sql
  readonly #timing: Timing
  readonly #batches: Batcher<ClaimAttempt, KeyRow | undefined>

  constructor(sql: Sql, timing: Timing, statements: SharedStatements = {}) {
    this.#sql = sql
    this.#timing = timing
    this.#batches = new Batcher((attempts) => claimStatement(sql, timing, attempts), {
      maxSize: MAX_CLAIMS_PER_STATEMENT,
      ...statements,
    })
  }

  /**
   * Claims the key for this request, or says why not. One statement finds out: it inserts a new claim, or, when
   * the key exists, reads it without writing (no lock, no transaction id), so replays, 409s and 422s cost a read.
   * Only an expired completed key or a claim abandoned by its holder is taken over, by a second, conditional
   * UPDATE; a claim whose lease is still running is never taken. An unsettled key never expires: its operation
   * may be downstream, so it stays bound to its request until a retry or the recovery worker settles it.
   */
  async claim(
    scope: KeyScope,
    fingerprint: Buffer,
    /**
     * Kept with the claim when the endpoint can be recovered: the validated request, to settle it without its client.
     */
    request: unknown = null,
  ): Promise<ClaimResult> {
    const waits = [...IN_FLIGHT_WAITS_MS]
    const requestJson = request === null ? null : JSON.stringify(request)
    for (let round = 0; round < CLAIM_ROUNDS; round++) {
      const token = randomUUID()
      const askedAt = { monotonic: performance.now(), wall: Date.now() }
      const row = await this.#batches.submit({ scope, fingerprint, token, request: requestJson })
      // The key was inserted by a transaction that committed after this statement's snapshot (or by a twin in the
      // same statement): look again.
      if (!row) continue
      if (row.inserted)
        return {
          outcome: 'claimed',
          claim: { rowId: row.id, token, operationId: row.operation_id },
          takenOver: false,
          inherited: false,
        }

      const sameRequest = row.fingerprint.equals(fingerprint)
      const unsettled = row.completed_at === null
      if (unsettled) {
        // Bound to its request, expired or not: another body would orphan an operation that may be downstream.
        if (!sameRequest) return { outcome: 'fingerprint-mismatch' }
        // A running claim is never taken over: the key is busy until its holder lets go or its lease ends.
        if (!row.lease_over) {
          const wait = waits.shift()
          if (wait === undefined) return { outcome: 'in-flight' }
          await sleep(wait)
          round--
          continue
        }
      } else if (!row.expired) {
        if (!sameRequest) return { outcome: 'fingerprint-mismatch' }
        const response = { status: row.response_status, headers: row.response_headers, body: row.response_body }
        return { outcome: 'completed', response, expiresInMs: row.expires_in_ms, askedAt }
      }
      const taken = await takeOver(this.#sql, row, fingerprint, token, this.#timing, request)
      if (taken) {
        const claim = { rowId: row.id, token, operationId: taken.operation_id }
        return {
          outcome: 'claimed',
          claim,
          takenOver: true,
          inherited: unsettled,
          ...(unsettled && { operationSince: taken.created_at }),
        }
      }
    }
    return { outcome: 'in-flight' }
  }
}

/**
 * The claim of a batch of requests (a request alone is a batch of one), one row each, answered in their order.
 * Read first: a key that exists (a replay, a 409, a 422) has no row to insert, so for it the statement is a
 * plain index read. Against inserting with ON CONFLICT DO NOTHING first, measured with npm run bench: a replay's
 * database time per request 0.28 -> 0.16 ms, new claims unchanged. New keys are inserted in key order, so that two
 * instances' batches wait for each other's uncommitted keys in one order and never deadlock. An answer is missing
 * (undefined) when the key was inserted after the statement's snapshot, by another statement or by a twin earlier
 * in this one.
 *
 * Its input has a LIMIT, of the number of requests it carries. The statement is prepared, and PostgreSQL may keep
 * one generic plan for it for the life of a connection. In a generic plan it guesses that unnest() of an array
 * parameter yields 10 rows, and for 10 rows a hash join over a full scan of the key table is the cheaper plan while
 * that table is small: a fresh deployment's, or the benchmark's. The plan is kept as the table grows, and a claim
 * then scanned 100,000 rows (measured: 1.4 ms per statement instead of 0.1). A LIMIT by a parameter makes it guess
 * one row of input, so the plan probes the unique index once per request, as soon as the table is a few pages long.
 */
async function claimStatement(sql: Sql, timing: Timing, attempts: ClaimAttempt[]): Promise<(KeyRow | undefined)[]> {
  const column = (value: (attempt: ClaimAttempt) => string | null) => attempts.map(value)
  const rows = await sql<(KeyRow & { ord: string })[]>`
    with input as (
      select * from unnest(
        ${column((a) => a.scope.accountId)}::text[], ${column((a) => a.scope.endpoint)}::text[],
          ${column((a) => a.scope.key)}::text[],
        ${column((a) => a.fingerprint.toString('hex'))}::text[], ${column((a) => a.token)}::text[],
          ${column((a) => a.request)}::text[]
      ) with ordinality as i(account_id, endpoint, key, fingerprint, token, request, ord)
      limit ${attempts.length}
    ),
    existing as (
      select i.ord, k.id, k.operation_id, k.fingerprint, k.claim_token, k.expires_at <= now() as expired,
             extract(epoch from k.expires_at - now())::float8 * 1000 as expires_in_ms,
             coalesce(k.locked_until <= now(), false) as lease_over, k.completed_at, k.response_status,
               k.response_headers, k.response_body
      from input i
      -- A probe of the unique index per request, whatever the table's size when the plan was made (LIMIT keeps the
      -- subquery a nested loop: as a join, a plan made while the table was tiny hashes a full scan of it).
      cross join lateral (
        select * from idempotency_keys k
        where k.account_id = i.account_id and k.endpoint = i.endpoint and k.key = i.key
        limit 1
      ) k
    ),
    inserted as (
      insert into idempotency_keys
        (account_id, endpoint, key, fingerprint, operation_id, claim_token, locked_until, expires_at, request)
      select i.account_id, i.endpoint, i.key, decode(i.fingerprint, 'hex'), gen_random_uuid(), i.token::uuid,
             now() + ${timing.leaseSeconds} * interval '1 second', now() + ${timing.ttlSeconds} * interval '1 second',
               i.request::jsonb
      from input i
      where not exists (select from existing e where e.ord = i.ord)
      order by i.account_id, i.endpoint, i.key
      on conflict (account_id, endpoint, key) do nothing
      returning id, operation_id, claim_token
    )
    select i.ord, true as inserted, n.id, n.operation_id, null::bytea as fingerprint, null::uuid as claim_token,
           false as expired, null::float8 as expires_in_ms, false as lease_over, null::timestamptz as completed_at,
           null::smallint as response_status, null::jsonb as response_headers, null::bytea as response_body
    from inserted n join input i on i.token::uuid = n.claim_token
    union all
    select ord, false, id, operation_id, fingerprint, claim_token, expired, expires_in_ms, lease_over, completed_at,
           response_status, response_headers, response_body
    from existing`
  const answers: (KeyRow | undefined)[] = new Array(attempts.length)
  for (const row of rows) answers[Number(row.ord) - 1] = row
  return answers
}

/**
 * Takes over an expired completed key (a new request: new operation, new expiry, old response dropped) or an
 * unsettled claim whose holder's lease ran out, with the same request (a crash, a lost answer: same operation id,
 * so the processor dedupes). The WHERE repeats both conditions and the token that was read, so of two racing
 * takeovers exactly one wins. A completed key is never changed before it expires: the replay cache
 * (replay-cache.ts) relies on that.
 */
async function takeOver(
  sql: Sql,
  row: ExistingKey,
  fingerprint: Buffer,
  token: string,
  timing: Timing,
  request: unknown,
) {
  const [taken] = await sql<{ operation_id: string; created_at: Date }[]>`
    update idempotency_keys as k set
      fingerprint = ${fingerprint},
      request = ${request === null ? null : sql.json(request as never)},
      recovery_attempts = 0,
      claim_token = ${token},
      locked_until = now() + ${timing.leaseSeconds} * interval '1 second',
      operation_id = case when k.completed_at is null then k.operation_id else gen_random_uuid() end,
      created_at = case when k.completed_at is null then k.created_at else now() end,
      expires_at = case when k.completed_at is null then k.expires_at else now() + ${timing.ttlSeconds} * interval
        '1 second' end,
      completed_at = null, response_status = null, response_headers = null, response_body = null
    where k.id = ${row.id}
      and k.claim_token is not distinct from ${row.claim_token}
      and ((k.completed_at is not null and k.expires_at <= now())
           or (k.completed_at is null and k.locked_until <= now() and k.fingerprint = ${fingerprint}))
    returning k.operation_id, k.created_at`
  return taken
}
