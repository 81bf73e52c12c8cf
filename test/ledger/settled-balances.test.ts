// Settled balances (src/ledger/settled-balances.ts): whatever the postings and however the sums are rolled, a balance
// read from the sums kept and what settled since equals the ledger summed in full; and a roll never leaves out a
// posting of a transaction still open at its cutoff, whether this role may read that transaction's start or not.
import { randomBytes, randomUUID } from 'node:crypto'
import fc from 'fast-check'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAccount } from '../../src/accounts/api-keys.js'
import { connect, type Sql } from '../../src/db/connect.js'
import { type RollSettings, rollAccount, rollBalances } from '../../src/ledger/settled-balances.js'
import { postCapture } from '../../src/ledger/postings.js'
import type { Pricing } from '../../src/processor/pricing.js'
import { availableOf, balanceOf } from '../../src/ledger/repository.js'
import { balanceRolls } from '../../src/observability/metrics.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { warnLines } from '../helpers/log-lines.js'

const FREE: Pricing = { percentBasisPoints: 0, fixedCents: 0, disputeFeeCents: 0, availableAfterDays: 0 }
const HOUR = 3_600_000
const START = Date.parse('2026-01-01T00:00:00Z')
const log = pino({ level: 'silent' })
const SETTINGS: RollSettings = {
  marginSeconds: 0,
  waitMs: 60_000,
  batchSize: 2,
  maxMs: 60_000,
  warnBehindSeconds: 3600,
}

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(() => database?.drop())

interface Posting {
  currency: 'usd' | 'eur'
  net: number
  /** Hours after START. */
  createdAt: number
  /** Hours after it was created. */
  availableAfter: number
}

/** A ledger transaction as posted at a chosen time (created_at is otherwise its transaction's start). */
async function insertPosting(sql: Sql, accountId: string, posting: Posting) {
  const createdAt = new Date(START + posting.createdAt * HOUR)
  const availableOn = new Date(createdAt.getTime() + posting.availableAfter * HOUR)
  const [accounts, cents] =
    posting.net === 0
      ? [
          ['payouts_in_transit', 'bank'],
          [-100, 100],
        ]
      : [
          ['balance', 'processor'],
          [posting.net, -posting.net],
        ]
  await sql`
    insert into ledger_transactions (account_id, id, type, source, posting, amount_cents, fee_cents, net_cents,
      currency, available_on, created_at, entry_accounts, entry_cents)
    values (${accountId}, ${`txn_${randomBytes(12).toString('hex')}`},
      ${posting.net === 0 ? 'payout_arrival' : posting.net > 0 ? 'charge' : 'refund'}, 'src_test', ${randomUUID()},
      ${posting.net}, 0, ${posting.net}, ${posting.currency}, ${availableOn}, ${createdAt}, ${accounts}::text[],
      ${cents}::bigint[])`
}

/** The balance as the ledger summed in full says it is at `now` (AVAILABLE: money in once available, out at once). */
function summed(postings: Posting[], now: Date) {
  const balance = new Map<string, { available: number; pending: number }>()
  for (const posting of postings) {
    const availableOn = START + (posting.createdAt + posting.availableAfter) * HOUR
    const entry = balance.get(posting.currency) ?? { available: 0, pending: 0 }
    if (availableOn <= now.getTime() || posting.net < 0) entry.available += posting.net
    else entry.pending += posting.net
    balance.set(posting.currency, entry)
  }
  return [...balance].sort(([a], [b]) => a.localeCompare(b))
}

async function read(accountId: string, now: Date) {
  const balance = await balanceOf(database.sql, accountId, now)
  const available = await Promise.all(
    balance.available.map(({ currency }) =>
      database.sql.begin((tx) => availableOf(tx, accountId, currency, now)).then((cents) => [currency, cents]),
    ),
  )
  return {
    balance: balance.available.map((entry, n) => [
      entry.currency,
      { available: entry.amount_cents, pending: balance.pending[n]?.amount_cents },
    ]),
    available: Object.fromEntries(available),
  }
}

const posting = fc.record({
  currency: fc.constantFrom('usd' as const, 'eur' as const),
  net: fc.oneof(fc.integer({ min: -5000, max: 20_000 }), fc.constant(0)),
  createdAt: fc.integer({ min: 0, max: 200 }),
  availableAfter: fc.constantFrom(0, 0, 1, 48, 170),
})

describe('settled balances', () => {
  it('when postings are rolled into sums at any cutoffs, then every balance read equals the ledger summed in full', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(posting, fc.boolean()), { minLength: 1, maxLength: 25 }),
        fc.array(fc.integer({ min: 0, max: 400 }), { maxLength: 4 }),
        fc.array(fc.integer({ min: -10, max: 420 }), { minLength: 1, maxLength: 4 }),
        async (steps, rolls, reads) => {
          const { account_id } = await createAccount(database.sql, 'Kept')
          const posted: Posting[] = []
          // Postings interleaved with rolls to later and later cutoffs; a posting made after a roll is created at
          // its cutoff or later (what settledCutoff guarantees of the real cutoff).
          const cutoffs = rolls.sort((a, b) => a - b)
          let rolledTo = 0
          for (const [generated, rollAfter] of steps) {
            const each = { ...generated, createdAt: Math.max(generated.createdAt, rolledTo) }
            await insertPosting(database.sql, account_id, each)
            posted.push(each)
            const cutoff = cutoffs.shift()
            if (rollAfter && cutoff !== undefined) {
              rolledTo = Math.max(rolledTo, cutoff)
              await rollAccount(database.sql, account_id, new Date(START + rolledTo * HOUR))
            }
          }
          for (const hours of reads) {
            const now = new Date(START + hours * HOUR)
            const expected = summed(posted, now)
            const { balance, available } = await read(account_id, now)
            expect(balance).toEqual(expected)
            expect(available).toEqual(
              Object.fromEntries(expected.map(([currency, sums]) => [currency, sums.available])),
            )
          }
        },
      ),
      { numRuns: 40 },
    )
  })

  it('when a roll adds nothing new, then nothing is written, and rolling back to an earlier cutoff does nothing', async () => {
    const { account_id } = await createAccount(database.sql, 'Kept twice')
    await insertPosting(database.sql, account_id, { currency: 'usd', net: 500, createdAt: 0, availableAfter: 0 })
    expect(await rollAccount(database.sql, account_id, new Date(START + 10 * HOUR))).toBe(true)
    expect(await rollAccount(database.sql, account_id, new Date(START + 20 * HOUR))).toBe(false)
    expect(await rollAccount(database.sql, account_id, new Date(START + 5 * HOUR))).toBe(false)
    const kept = await database.sql`
      select currency, through, net_cents from ledger_settled_balances where account_id = ${account_id}`
    expect(kept).toEqual([{ currency: 'usd', through: new Date(START + 10 * HOUR), net_cents: '500' }])
  })
})

/**
 * An account with a capture of 100 committed, and a transaction open that posted a capture of `cents`, not committed
 * until `commit` is called. (The first gives a roll something to keep, and so a `through` that must not pass the
 * second.)
 */
async function openPosting(sql: Sql, cents: number) {
  const { account_id } = await createAccount(database.sql, 'Open')
  await sql.begin((tx) => postCapture(tx, FREE, { account_id, currency: 'usd', id: `ch_${randomUUID()}` }, 100))
  let commit = () => {}
  const committed = new Promise<void>((resolve) => {
    commit = resolve
  })
  let posted = () => {}
  const isPosted = new Promise<void>((resolve) => {
    posted = resolve
  })
  let pid = 0
  const transaction = sql.begin(async (tx) => {
    ;[{ pid = 0 } = {}] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`
    await postCapture(tx, FREE, { account_id, currency: 'usd', id: `ch_${randomUUID()}` }, cents)
    posted()
    await committed
  })
  await isPosted
  return {
    account_id,
    pid,
    commit: async () => {
      commit()
      await transaction
    },
  }
}

describe('the cutoff a roll runs to', () => {
  it('when a transaction that posted is still open, then the roll stops at its start, says so, and its posting counts once it commits', async () => {
    const open = await openPosting(database.sql, 700)
    const { log: warnLog, lines: warned } = warnLines()
    const run = await rollBalances(database.sql, { ...SETTINGS, warnBehindSeconds: 0 }, warnLog)
    expect(run.heldBy).toBeUndefined()
    // Held back by it, and said so, naming its backend.
    expect(warned).toContainEqual(
      expect.objectContaining({ pid: open.pid, msg: expect.stringMatching(/^balances rolled only up to/) }),
    )
    await open.commit()
    expect((await balanceOf(database.sql, open.account_id, new Date())).available).toEqual([
      { amount_cents: 800, currency: 'usd' },
    ])
    // Rolled again, it is kept (again until nothing older is open: autovacuum, say, may be at this database).
    const kept = async () => {
      await rollBalances(database.sql, SETTINGS, log)
      const [row] =
        await database.sql`select net_cents from ledger_settled_balances where account_id = ${open.account_id}`
      return row?.net_cents
    }
    await expect.poll(kept, { timeout: 60_000 }).toBe('800')
  })

  describe('when this role may not read the start of other roles’ transactions', () => {
    let unprivileged: Sql
    let role: string
    beforeAll(async () => {
      role = `roller_${randomBytes(6).toString('hex')}`
      await database.sql.unsafe(`create role ${role} login password 'roller'`)
      await database.sql.unsafe(`grant select, insert, update on all tables in schema public to ${role}`)
      const url = new URL(database.url)
      url.username = role
      url.password = 'roller'
      unprivileged = connect(url.toString(), { max: 2 })
    })
    afterAll(async () => {
      await unprivileged?.end()
      await database.sql.unsafe(`drop owned by ${role}; drop role ${role}`)
    })

    it('then the roll waits for them to end, and their postings count', async () => {
      let settings = SETTINGS
      const open = await openPosting(database.sql, 900)
      let told: number[] = []
      const waiting = new Promise<void>((resolve) => {
        const onWait = (pids: number[]) => {
          told = pids
          resolve()
        }
        settings = { ...SETTINGS, onWait }
      })
      const roll = rollBalances(unprivileged, settings, log)
      // The roll tells it waits, and goes on once the transaction ends (that it does not go on before, the next test).
      await Promise.race([waiting, roll])
      await open.commit()
      expect((await roll).heldBy).toBeUndefined()
      expect(told).toContain(open.pid)
      const [kept] = await database.sql`
        select net_cents from ledger_settled_balances where account_id = ${open.account_id}`
      expect(kept?.net_cents).toBe('1000')
      expect((await balanceOf(database.sql, open.account_id, new Date())).available).toEqual([
        { amount_cents: 1000, currency: 'usd' },
      ])
    })

    it('then past its wait the roll is held back, rolls nothing, and says so', async () => {
      const open = await openPosting(database.sql, 300)
      const before = await heldBackRuns()
      const run = await rollBalances(unprivileged, { ...SETTINGS, waitMs: 0 }, log)
      expect(run).toEqual({ rolled: 0, heldBy: expect.arrayContaining([expect.any(Number)]) })
      expect(await heldBackRuns()).toBe(before + 1)
      await open.commit()
      const kept = await database.sql`select from ledger_settled_balances where account_id = ${open.account_id}`
      expect(kept).toHaveLength(0)
    })
  })
})

async function heldBackRuns(): Promise<number> {
  const { values } = await balanceRolls.get()
  return values.find((value) => value.labels.result === 'held_back')?.value ?? 0
}
