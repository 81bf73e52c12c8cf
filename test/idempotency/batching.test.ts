// Requests that claim at the same moment share one statement, and requests that complete at the same moment share
// one transaction (src/db/batcher.ts), and a batch is all-or-nothing only where that is right: a request whose
// completion is fenced off, whose row violates a constraint, or whose batch loses its connection must not take
// the others' outcome with it. Against a real PostgreSQL; a batch is made deterministically: requests submitted
// in one turn of the event loop go out together.
import { randomBytes } from 'node:crypto'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAccount } from '../../src/accounts/api-keys.js'
import { recordCharge } from '../../src/charges/record-charge.js'
import { insertEvent } from '../../src/events/events.js'
import { postRefund } from '../../src/ledger/postings.js'
import { connect, type Sql } from '../../src/db/connect.js'
import { isDatabaseUnavailable } from '../../src/db/errors.js'
import { newId } from '../../src/db/ids.js'
import type { Transaction } from '../../src/db/connect.js'
import { KeyClaims } from '../../src/idempotency/claims.js'
import { Completions } from '../../src/idempotency/completions.js'
import type { Claim } from '../../src/idempotency/store.js'
import { startCuttingProxy, type CuttingProxy } from '../helpers/cutting-proxy.js'
import { LATER_SETTINGS } from '../helpers/at-processor.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

const timing = { ttlSeconds: 3600, leaseSeconds: 30, recoveryGraceSeconds: 5 }
const CUT_MARKER = 'cut-this-batch'
const SILENCE_MARKER = 'silence-this-batch'
let database: TestDatabase
let proxy: CuttingProxy
let proxied: Sql
let silencer: CuttingProxy
let silenced: Sql
let accountId: string

beforeAll(async () => {
  database = await createTestDatabase()
  ;({ account_id: accountId } = await createAccount(database.sql, 'Batching'))
  // Cuts the connection that sends a statement carrying the marker, before PostgreSQL sees it.
  proxy = await startCuttingProxy(database.url, (chunk) => chunk.includes(CUT_MARKER))
  proxied = connect(proxy.url, { max: 4 })
  // Swallows the statement carrying its marker, and all after it on that connection: nothing answers, nothing closes.
  silencer = await startCuttingProxy(database.url, (chunk) => chunk.includes(SILENCE_MARKER), 1, 'silence')
  silenced = connect(silencer.url, { max: 4 })
})
afterAll(async () => {
  for (const pool of [proxied, silenced]) await pool.end({ timeout: 1 })
  for (const each of [proxy, silencer]) await each.close()
  await database.drop()
})

const scope = (key: string) => ({ accountId, endpoint: 'POST /v1/charges', key })
const keyNamed = (name: string) => `${name}-${randomBytes(6).toString('hex')}`

async function claimed(claims: KeyClaims, key: string): Promise<Claim> {
  const result = await claims.claim(scope(key), randomBytes(32))
  if (result.outcome !== 'claimed') throw new Error(`${key}: ${result.outcome}`)
  return result.claim
}

/** A succeeded charge as the route records it (the charge row and its event), answering its 201. */
const charge =
  (description = 'batched', amountCents = 1000) =>
  (tx: Transaction) =>
    recordCharge(
      tx,
      newId('ch'),
      { id: accountId, processorAccount: null },
      { amount_cents: amountCents, currency: 'usd', source: 'pm_card_visa', description },
      { status: 'succeeded', processorReference: `ref_${randomBytes(4).toString('hex')}` },
      LATER_SETTINGS.pricing,
    )

/** Completes `batch` in one transaction; each answer, or its error's code. */
async function completeBatch(completions: Completions, batch: { claim: Claim; work: ReturnType<typeof charge> }[]) {
  const batched = batch.map(({ claim, work }) =>
    completions.complete(claim, work).then(
      (response) => ({ completed: response.status }),
      (error: { code?: string }) => ({ error: error.code, unavailable: isDatabaseUnavailable(error) }),
    ),
  )
  return Promise.all(batched)
}

const keyState = async (claim: Claim) =>
  (
    await database.sql<{ completed: boolean; token: string | null }[]>`
    select completed_at is not null as completed, claim_token::text as token from idempotency_keys where id =
      ${claim.rowId}`
  )[0]!
const chargesDescribed = async (description: string) =>
  Number(
    (
      await database.sql<
        { count: string }[]
      >`select count(*) from charges where account_id = ${accountId} and description = ${description}`
    )[0]!.count,
  )
const eventsOf = async (description: string) =>
  Number(
    (
      await database.sql<
        { count: string }[]
      >`select count(*) from events where account_id = ${accountId} and body::jsonb->'data'->'object'->>'description'
        = ${description}`
    )[0]!.count,
  )

describe('completions shared by concurrent requests', () => {
  it('when one request of a batch was taken over, then it alone writes nothing and is refused, and the others commit', async () => {
    const sizes: number[] = []
    const claims = new KeyClaims(database.sql, timing)
    const completions = new Completions(database.sql, { onBatch: (size) => sizes.push(size) })
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((name) => claimed(claims, keyNamed(name))))
    // b's lease ran out and a retry took the key over: the token b holds is no longer the key's.
    const [successor] = await database.sql<{ token: string }[]>`
      update idempotency_keys set claim_token = gen_random_uuid() where id = ${b!.rowId} returning claim_token::text
        as token`

    const answers = await completeBatch(
      completions,
      [a!, b!, c!].map((claim, index) => ({ claim, work: charge(`fenced-batch-${index}`) })),
    )

    // One transaction of three, rolled back by b's completion; then each alone (not a batch of its own).
    expect(sizes).toEqual([3])
    expect(answers).toEqual([{ completed: 201 }, { error: 'IK409', unavailable: false }, { completed: 201 }])
    expect([
      await chargesDescribed('fenced-batch-0'),
      await chargesDescribed('fenced-batch-1'),
      await chargesDescribed('fenced-batch-2'),
    ]).toEqual([1, 0, 1])
    expect([
      await eventsOf('fenced-batch-0'),
      await eventsOf('fenced-batch-1'),
      await eventsOf('fenced-batch-2'),
    ]).toEqual([1, 0, 1])
    expect(await keyState(b!)).toEqual({ completed: false, token: successor!.token })
    expect((await keyState(a!)).completed && (await keyState(c!)).completed).toBe(true)
  })

  it('when one request’s row violates a constraint, then it alone fails, and the others commit', async () => {
    const claims = new KeyClaims(database.sql, timing)
    const completions = new Completions(database.sql)
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((name) => claimed(claims, keyNamed(name))))

    const answers = await completeBatch(completions, [
      { claim: a!, work: charge('failing-batch-0') },
      // An amount the charges table refuses (check constraint): the whole transaction fails, whoever wrote it.
      { claim: b!, work: charge('failing-batch-1', 0) },
      { claim: c!, work: charge('failing-batch-2') },
    ])

    expect(answers).toEqual([{ completed: 201 }, { error: '23514', unavailable: false }, { completed: 201 }])
    expect([
      await chargesDescribed('failing-batch-0'),
      await chargesDescribed('failing-batch-1'),
      await chargesDescribed('failing-batch-2'),
    ]).toEqual([1, 0, 1])
    expect((await keyState(b!)).completed).toBe(false)
  })

  it('when the batch loses its connection, then each of its requests is told the database is unavailable, nothing of it is written, and the next batch goes through', async () => {
    const claims = new KeyClaims(database.sql, timing)
    const completions = new Completions(proxied)
    const [a, b, c, after] = await Promise.all(['a', 'b', 'c', 'after'].map((name) => claimed(claims, keyNamed(name))))

    const answers = await completeBatch(completions, [
      { claim: a!, work: charge('lost-batch-0') },
      { claim: b!, work: charge(CUT_MARKER) },
      { claim: c!, work: charge('lost-batch-2') },
    ])

    expect(proxy.cuts()).toBe(1)
    for (const answer of answers) expect(answer).toMatchObject({ unavailable: true })
    expect([
      await chargesDescribed('lost-batch-0'),
      await chargesDescribed(CUT_MARKER),
      await chargesDescribed('lost-batch-2'),
    ]).toEqual([0, 0, 0])
    for (const claim of [a!, b!, c!]) expect((await keyState(claim)).completed).toBe(false)
    expect((await completions.complete(after!, charge('lost-batch-after'))).status).toBe(201)
  })

  it('when works share a transaction, then each runs after the one before it and sees what it wrote', async () => {
    const claims = new KeyClaims(database.sql, timing)
    const sizes: number[] = []
    const completions = new Completions(database.sql, { onBatch: (size) => sizes.push(size) })
    const [a, b] = await Promise.all(['a', 'b'].map((name) => claimed(claims, keyNamed(name))))
    const seen: number[] = []

    const answers = await completeBatch(
      completions,
      [a!, b!].map((claim) => ({
        claim,
        work: async (tx: Transaction) => {
          const [row] = await tx<{ count: number }[]>`
            select count(*)::int as count from charges where account_id = ${accountId} and description = 'in-turn'`
          seen.push(row!.count)
          return charge('in-turn')(tx)
        },
      })),
    )

    expect(sizes).toEqual([2])
    expect(answers).toEqual([{ completed: 201 }, { completed: 201 }])
    expect(seen).toEqual([0, 1])
  })
})

describe('the inserts of a shared transaction', () => {
  it('when twenty requests that only insert complete together, then one batch, without BEGIN or COMMIT, inserts each table’s rows in one statement and completes the keys in one', async () => {
    const claims = new KeyClaims(database.sql, timing)
    const sent: string[] = []
    const watched = postgres(database.url, { max: 2, debug: (_connection, text) => sent.push(text) })
    try {
      const sizes: number[] = []
      const completions = new Completions(watched as Sql, {
        onBatch: (size) => sizes.push(size),
        onSplit: (size) => sizes.push(-size),
      })
      const keys = await Promise.all(Array.from({ length: 20 }, (_, n) => claimed(claims, keyNamed(`twenty-${n}`))))

      const answers = await completeBatch(
        completions,
        keys.map((claim) => ({ claim, work: charge('twenty-together') })),
      )

      expect(sizes).toEqual([20])
      expect(answers.every((answer) => 'completed' in answer && answer.completed === 201)).toBe(true)
      const statements = sent
        .map((text) => /^\s*(begin|commit|insert into \w+|select \w+)/.exec(text)?.[1] ?? text)
        .sort()
      expect(statements).toEqual(
        [
          'insert into charges',
          'insert into events',
          'insert into ledger_transactions',
          'select complete_idempotency_keys',
        ].sort(),
      )
      expect(await chargesDescribed('twenty-together')).toBe(20)
      expect(await eventsOf('twenty-together')).toBe(20)
      const [posted] = await database.sql<{ count: number }[]>`
        select count(*)::int from ledger_transactions t
        join charges c on c.id = t.source and c.account_id = t.account_id
        where c.description = 'twenty-together'`
      expect(posted!.count).toBe(20)
    } finally {
      await watched.end()
    }
  })

  it('when one work of a batch reads, then the batch runs in a transaction, and each table’s rows still go out in one statement', async () => {
    const claims = new KeyClaims(database.sql, timing)
    const sent: string[] = []
    const watched = postgres(database.url, { max: 2, debug: (_connection, text) => sent.push(text) })
    try {
      const completions = new Completions(watched as Sql)
      const keys = await Promise.all(Array.from({ length: 5 }, (_, n) => claimed(claims, keyNamed(`mixed-${n}`))))
      const reading = async (tx: Transaction) => {
        await tx`select 1`
        return charge('mixed-batch')(tx)
      }

      const answers = await completeBatch(
        completions,
        keys.map((claim, n) => ({ claim, work: n === 2 ? reading : charge('mixed-batch') })),
      )

      expect(answers.every((answer) => 'completed' in answer && answer.completed === 201)).toBe(true)
      const statements = sent.map((text) => /^\s*(begin|commit|insert into \w+|select \w+)/.exec(text)?.[1] ?? text)
      // The two works before the reader had their rows sent before its statement; the rest go out at the end.
      expect(statements).toEqual([
        'begin',
        'insert into charges',
        'insert into events',
        'insert into ledger_transactions',
        'select 1',
        'insert into charges',
        'insert into events',
        'insert into ledger_transactions',
        'select complete_idempotency_keys',
        'commit',
      ])
      expect(await chargesDescribed('mixed-batch')).toBe(5)
    } finally {
      await watched.end()
    }
  })

  it('when a work reads after inserts that wait to be gathered, then what waits is sent first, and the read sees it', async () => {
    const claims = new KeyClaims(database.sql, timing)
    const completions = new Completions(database.sql)
    const [a, b] = await Promise.all(['a', 'b'].map((name) => claimed(claims, keyNamed(name))))
    const type = `test.gathered_${randomBytes(4).toString('hex').replace(/[0-9]/g, 'x')}` as 'charge.succeeded'
    const eventsSeen = async (tx: Transaction) =>
      (await tx<{ count: number }[]>`select count(*)::int from events where type = ${type}`)[0]!.count
    const seen: number[] = []
    const work = async (tx: Transaction) => {
      await insertEvent(tx, accountId, type, { object: {} } as never)
      seen.push(await eventsSeen(tx))
      return { status: 200, body: { seen: seen.at(-1) } }
    }

    const answers = await completeBatch(completions, [
      { claim: a!, work },
      { claim: b!, work },
    ])

    expect(answers).toEqual([{ completed: 200 }, { completed: 200 }])
    // Each work's own insert, and the first work's in the second, before its read.
    expect(seen).toEqual([1, 2])
    expect(await eventsSeen(database.sql as never)).toBe(2)
  })

  it('when two works post one cause, then it is posted once with the same amount, and refused with another', async () => {
    const claims = new KeyClaims(database.sql, timing)
    const completions = new Completions(database.sql)
    const refund = (id: string, amount_cents: number) => async (tx: Transaction) => {
      await postRefund(tx, { account_id: accountId, currency: 'usd', id, amount_cents })
      return { status: 200, body: {} }
    }
    const same = `re_same_${randomBytes(4).toString('hex')}`
    const other = `re_other_${randomBytes(4).toString('hex')}`
    const [a, b, c, d] = await Promise.all(['a', 'b', 'c', 'd'].map((name) => claimed(claims, keyNamed(name))))

    const answers = await completeBatch(completions, [
      { claim: a!, work: refund(same, 500) },
      { claim: b!, work: refund(same, 500) },
      { claim: c!, work: refund(other, 500) },
      { claim: d!, work: refund(other, 600) },
    ])

    // The batch's one statement refused the contradiction; alone (each in a transaction of its own, at once), both of
    // one amount post it once, and of the other two whichever came first stands and the other is refused.
    const outcomes = answers.map((answer) => ('completed' in answer ? answer.completed : 'refused'))
    expect(outcomes.slice(0, 2)).toEqual([200, 200])
    expect(outcomes.slice(2).sort()).toEqual([200, 'refused'])
    const stood = outcomes[2] === 200 ? -500 : -600
    const posted = await database.sql<{ source: string; amount_cents: string }[]>`
      select source, amount_cents from ledger_transactions where source in (${same}, ${other}) order by source`
    expect(posted.map((row) => [row.source, Number(row.amount_cents)]).sort()).toEqual(
      [
        [same, -500],
        [other, stood],
      ].sort(),
    )
  })
})

describe('a shared statement whose connection goes silent', () => {
  it('when it does not answer, then the requests behind it go out without it once it stalled, on another connection, and commit; the stall is told', async () => {
    const claims = new KeyClaims(database.sql, timing)
    const stalls: number[] = []
    const completions = new Completions(silenced, { stallAfterMs: 300, onStall: (size) => stalls.push(size) })
    const [silent, next] = await Promise.all(['silent', 'next'].map((name) => claimed(claims, keyNamed(name))))
    const unanswered = completions.complete(silent!, charge(SILENCE_MARKER))
    unanswered.catch(() => {}) // answered only when the pool ends, after the test
    await new Promise((resolve) => setImmediate(resolve))

    expect((await completions.complete(next!, charge('behind-a-silent-batch'))).status).toBe(201)

    expect(silencer.cuts()).toBe(1)
    // The silent one is told; on a loaded machine the one behind it may be slow enough to be told as well.
    expect(stalls[0]).toBe(1)
    expect(await chargesDescribed('behind-a-silent-batch')).toBe(1)
    expect((await keyState(next!)).completed).toBe(true)
    expect(await chargesDescribed(SILENCE_MARKER)).toBe(0)
  })
})

describe('claims shared by concurrent requests', () => {
  it('when one request’s stored request is refused by the database, then it alone fails, and the others claim their keys', async () => {
    const sizes: number[] = []
    const splits: [number, string][] = []
    const claims = new KeyClaims(database.sql, timing, {
      onBatch: (size) => sizes.push(size),
      onSplit: (size, error) => splits.push([size, (error as { code: string }).code]),
    })
    // jsonb refuses \u0000: that request's row fails the statement for the whole batch.
    const requests = [{ body: 'fine' }, { body: 'nul \u0000 inside' }, { body: 'fine too' }]
    const keys = requests.map((_, index) => keyNamed(`claim-${index}`))
    const answers = requests.map((request, index) =>
      claims.claim(scope(keys[index]!), randomBytes(32), request).then(
        (result) => result.outcome,
        (error: { code?: string }) => error.code,
      ),
    )
    expect(await Promise.all(answers)).toEqual(['claimed', '22P05', 'claimed'])
    expect(sizes).toEqual([3])
    expect(splits).toEqual([[3, '22P05']])
    const stored = await database.sql<
      { key: string }[]
    >`select key from idempotency_keys where key in ${database.sql(keys)} order by key`
    expect(stored.map((row) => row.key)).toEqual([keys[0], keys[2]].sort())
  })

  it('when twenty requests claim together, then one statement claims them all, without falling back to one at a time', async () => {
    const sent: string[] = []
    const watched = postgres(database.url, { max: 2, debug: (_connection, text) => sent.push(text) })
    try {
      const splits: number[] = []
      const claims = new KeyClaims(watched as Sql, timing, { onSplit: (size) => splits.push(size) })
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, n) =>
          claims.claim(scope(keyNamed(`together-${n}`)), randomBytes(32), { body: n }),
        ),
      )
      expect(results.every((result) => result.outcome === 'claimed')).toBe(true)
      expect(splits).toEqual([])
      expect(sent.length).toBe(1)
    } finally {
      await watched.end()
    }
  })

  it('when the same key is claimed twice in one batch, then exactly one request holds it and the other is told it is in flight', async () => {
    const sizes: number[] = []
    const claims = new KeyClaims(database.sql, timing, { onBatch: (size) => sizes.push(size) })
    const key = keyNamed('twin')
    const fingerprint = randomBytes(32)
    const twins = [claims.claim(scope(key), fingerprint), claims.claim(scope(key), fingerprint)]
    expect((await Promise.all(twins)).map((result) => result.outcome).sort()).toEqual(['claimed', 'in-flight'])
    expect(sizes[0]).toBe(2)
  })
})
