// Spending the balance (reserveFromBalance, the primitive docs/extending.md's payouts are built on): reservations
// at once never overdraw what is available, whatever their interleaving; money not available yet is not spent; and a
// balance the processor took below zero on its own refuses new spending without an error.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAccount } from '../../src/accounts/api-keys.js'
import { postCapture, postDisputeWithdrawal, reserveFromBalance } from '../../src/ledger/postings.js'
import type { Pricing } from '../../src/processor/pricing.js'
import { availableOf } from '../../src/ledger/repository.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

const FREE: Pricing = { percentBasisPoints: 0, fixedCents: 0, disputeFeeCents: 1500, availableAfterDays: 0 }
const DAY = 86_400_000

describe('reserving from the balance', () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(() => database.drop())

  /** An account whose usd balance was funded by a charge of `cents`, available `afterDays` from when it moved. */
  async function funded(cents: number, afterDays = 0, movedAt = new Date()) {
    const { account_id } = await createAccount(database.sql, 'Reserving')
    const money = { account_id, currency: 'usd' }
    const pricing = { ...FREE, availableAfterDays: afterDays }
    await database.sql.begin((tx) =>
      postCapture(tx, pricing, { ...money, id: `ch_${randomUUID()}` }, cents, { movedAt }),
    )
    return money
  }
  const available = (money: { account_id: string; currency: string }, now = new Date()) =>
    database.sql.begin((tx) => availableOf(tx, money.account_id, money.currency, now))

  it('when twenty reservations of 3000 race for a balance of 10000, then three are made and the balance is 1000', async () => {
    const money = await funded(10_000)
    const made = await Promise.all(
      Array.from({ length: 20 }, () =>
        database.sql.begin((tx) => reserveFromBalance(tx, money, `po_${randomUUID()}`, 3000, new Date())),
      ),
    )
    expect(made.filter(Boolean)).toHaveLength(3)
    expect(await available(money)).toBe(1000)
  })

  it('when the time was read before the lock, then money spent since counts all the same', async () => {
    const money = await funded(10_000, 0, new Date(Date.now() - DAY))
    // A moment read before waiting on the lock: the other payout was posted after it.
    const readBefore = new Date(Date.now() - 60_000)
    const reserve = () =>
      database.sql.begin((tx) => reserveFromBalance(tx, money, `po_${randomUUID()}`, 6000, readBefore))
    expect(await reserve()).toBe(true)
    expect(await reserve()).toBe(false)
    expect(await available(money)).toBe(4000)
  })

  it('when the money is not available yet, then it is not spent, until the day it is', async () => {
    const money = await funded(5000, 2)
    const reserve = (now: Date) =>
      database.sql.begin((tx) => reserveFromBalance(tx, money, `po_${randomUUID()}`, 5000, now))
    expect(await reserve(new Date())).toBe(false)
    expect(await reserve(new Date(Date.now() + 3 * DAY))).toBe(true)
    expect(await available(money, new Date(Date.now() + 3 * DAY))).toBe(0)
  })

  it('when a dispute takes the balance below zero after it was spent, then a new reservation is refused, not failed', async () => {
    const money = await funded(4000)
    expect(await database.sql.begin((tx) => reserveFromBalance(tx, money, 'po_all', 4000, new Date()))).toBe(true)
    await database.sql.begin((tx) =>
      postDisputeWithdrawal(tx, FREE, money, `dp_${randomUUID()}`, { amountCents: 4000 }),
    )
    expect(await available(money)).toBe(-5500)
    expect(await database.sql.begin((tx) => reserveFromBalance(tx, money, 'po_more', 1, new Date()))).toBe(false)
  })
})
