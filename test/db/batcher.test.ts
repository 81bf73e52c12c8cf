// The batcher's promise to a lone client: nothing waits for company. A request that finds no statement in flight
// goes out at the end of this turn of the event loop (setImmediate, no timer), with whatever else arrived in that
// turn; the requests that arrive while it is in flight go out together when it returns.
import { describe, expect, it, vi } from 'vitest'
import { Batcher } from '../../src/db/batcher.js'

/** The end of this turn of the event loop: what the batcher scheduled with setImmediate has run. */
const endOfTurn = () => new Promise((resolve) => setImmediate(resolve))

/** A statement that answers only when told to, and records the batches it was sent. */
function heldStatement() {
  const batches: number[][] = []
  const answers: (() => void)[] = []
  const run = (items: number[]) => {
    batches.push(items)
    return new Promise<number[]>((resolve) => answers.push(() => resolve(items.map((item) => item * 10))))
  }
  return { batches, run, answerNext: () => answers.shift()!() }
}

/** A statement that fails with `code` for the batches `fails` picks, answers the others, and records them all. */
function failingStatement(message: string, code: string, fails: (items: number[]) => boolean) {
  const batches: number[][] = []
  const run = async (items: number[]) => {
    batches.push(items)
    if (fails(items)) throw Object.assign(new Error(message), { code })
    return items
  }
  return { batches, run }
}

describe('Batcher', () => {
  it('when nothing is in flight, then an item goes out at the end of this turn of the event loop, alone', async () => {
    const statement = heldStatement()
    const batcher = new Batcher(statement.run, { maxSize: 10 })
    const answer = batcher.submit(1)
    await endOfTurn()
    expect(statement.batches).toEqual([[1]])
    statement.answerNext()
    expect(await answer).toBe(10)
  })

  it('when items arrive in one turn of the event loop, then they go out together', async () => {
    const statement = heldStatement()
    const batcher = new Batcher(statement.run, { maxSize: 10 })
    const answers = [1, 2, 3].map((item) => batcher.submit(item))
    await endOfTurn()
    expect(statement.batches).toEqual([[1, 2, 3]])
    statement.answerNext()
    expect(await Promise.all(answers)).toEqual([10, 20, 30])
  })

  it('when items arrive while a statement is in flight, then they go out together as soon as it returns, each answered its own', async () => {
    const statement = heldStatement()
    const sizes: number[] = []
    const batcher = new Batcher(statement.run, { maxSize: 10, onBatch: (size) => sizes.push(size) })
    const first = batcher.submit(1)
    await endOfTurn()
    const queued = [2, 3, 4].map((item) => batcher.submit(item))
    expect(statement.batches).toEqual([[1]])
    statement.answerNext()
    await first
    expect(statement.batches).toEqual([[1], [2, 3, 4]])
    statement.answerNext()
    expect(await Promise.all(queued)).toEqual([20, 30, 40])
    expect(sizes).toEqual([1, 3])
  })

  it('when more items queue than a statement carries, then the rest go in the next one', async () => {
    const statement = heldStatement()
    const batcher = new Batcher(statement.run, { maxSize: 2 })
    const answers = [1, 2, 3, 4, 5].map((item) => batcher.submit(item))
    await endOfTurn()
    statement.answerNext()
    await answers[0]
    statement.answerNext()
    await answers[2]
    statement.answerNext()
    expect(await Promise.all(answers)).toEqual([10, 20, 30, 40, 50])
    expect(statement.batches).toEqual([[1, 2], [3, 4], [5]])
  })

  it('when a statement stalls, then the items behind it go out without it, and it still answers its own', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const statement = heldStatement()
      const stalls: number[] = []
      const batcher = new Batcher(statement.run, {
        maxSize: 10,
        stallAfterMs: 3000,
        onStall: (size) => stalls.push(size),
      })
      const stalled = batcher.submit(1)
      await endOfTurn()
      const behind = [2, 3].map((item) => batcher.submit(item))
      vi.advanceTimersByTime(2999)
      expect(statement.batches).toEqual([[1]])
      vi.advanceTimersByTime(1)
      expect(stalls).toEqual([1])
      expect(statement.batches).toEqual([[1], [2, 3]])
      statement.answerNext()
      statement.answerNext()
      expect([await stalled, ...(await Promise.all(behind))]).toEqual([10, 20, 30])
      // Answered before its bound, a statement releases the queue once: the next item goes out alone, at once.
      const later = batcher.submit(4)
      await endOfTurn()
      expect(statement.batches).toEqual([[1], [2, 3], [4]])
      statement.answerNext()
      expect(await later).toBe(40)
      vi.advanceTimersByTime(10_000)
      expect(stalls).toEqual([1])
    } finally {
      vi.useRealTimers()
    }
  })

  it('when one item’s data fails the statement, then each item is sent again alone and only that one fails', async () => {
    const { batches, run } = failingStatement('new row violates check constraint', '23514', (items) =>
      items.includes(13),
    )
    const batcher = new Batcher(run, { maxSize: 10 })
    const lone = batcher.submit(1)
    await endOfTurn()
    const queued = [12, 13, 14].map((item) =>
      batcher.submit(item).then(
        (value) => ({ value }),
        (error: { code: string }) => ({ error: error.code }),
      ),
    )
    await lone
    expect(await Promise.all(queued)).toEqual([{ value: 12 }, { error: '23514' }, { value: 14 }])
    expect(batches).toEqual([[1], [12, 13, 14], [12], [13], [14]])
    expect(await batcher.submit(15)).toBe(15)
  })

  it('when the database is unreachable, then every item of the batch fails with it and none is sent again', async () => {
    const { batches, run } = failingStatement(
      'write CONNECTION_CLOSED',
      'CONNECTION_CLOSED',
      (items) => items.length > 1,
    )
    const batcher = new Batcher(run, { maxSize: 10 })
    const lone = batcher.submit(1)
    await endOfTurn()
    const queued = [2, 3].map((item) => batcher.submit(item).catch((error: { code: string }) => error.code))
    await lone
    expect(await Promise.all(queued)).toEqual(['CONNECTION_CLOSED', 'CONNECTION_CLOSED'])
    expect(batches).toEqual([[1], [2, 3]])
    expect(await batcher.submit(4)).toBe(4)
  })

  it('when a batch loses a deadlock, then its items are sent again alone: nothing of it was committed', async () => {
    const { batches, run } = failingStatement('deadlock detected', '40P01', (items) => items.length > 1)
    const batcher = new Batcher(run, { maxSize: 10 })
    const lone = batcher.submit(1)
    await endOfTurn()
    const queued = [2, 3].map((item) => batcher.submit(item))
    await lone
    expect(await Promise.all(queued)).toEqual([2, 3])
    expect(batches).toEqual([[1], [2, 3], [2], [3]])
  })
})
