// patches/postgres+3.4.9.patch is applied by `npm ci` (postinstall: patch-package). Without it a closed
// connection can crash the process and a busy pool slows down over time; see the README.
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { connect } from '../../src/db/connect.js'
import { withTimeout } from '../../src/db/errors.js'
import { createTestDatabase } from '../helpers/database.js'

// The package's main entry is cjs/src/index.js; its root is two levels up.
const postgresDir = join(dirname(createRequire(import.meta.url).resolve('postgres')), '..', '..')
const { default: Queue } = (await import(join(postgresDir, 'src', 'queue.js'))) as { default: (initial?: unknown[]) => Queue }

interface Queue {
  length: number
  push(x: unknown): unknown
  shift(): unknown
  remove(x: unknown): unknown
}

describe('the postgres.js patch', () => {
  it('when installed, then both the ESM and CommonJS builds carry it', async () => {
    for (const build of ['src', 'cjs/src']) {
      expect(await readFile(join(postgresDir, build, 'connection.js'), 'utf8')).toContain('patched (payments-api)')
      expect(await readFile(join(postgresDir, build, 'queue.js'), 'utf8')).toContain('patched (payments-api)')
    }
  })

  it('when a queue stays busy through many pushes, shifts and removes, then it keeps first-in-first-out order', () => {
    const queue = Queue()
    const expected: number[] = []
    let next = 0
    for (let round = 0; round < 5000; round++) {
      queue.push(next)
      expected.push(next++)
      queue.push(next)
      expected.push(next++)
      if (round % 7 === 0) {
        const victim = expected.splice(1, 1)[0]
        expect(queue.remove(victim)).toBe(victim)
      }
      expect(queue.shift()).toBe(expected.shift())
      expect(queue.length).toBe(expected.length)
    }
    expect(queue.remove(-1)).toBeNull()
    while (expected.length) expect(queue.shift()).toBe(expected.shift())
    expect(queue.length).toBe(0)
  })

  it('when a transaction’s connection dies under it, then the transaction fails and the pool goes on serving', async () => {
    const database = await createTestDatabase()
    const pool = connect(database.url, { max: 1 })
    try {
      const [backend] = await pool<{ pid: number }[]>`select pg_backend_pid() as pid`
      const pid = backend!.pid
      const transaction = pool.begin(async (tx) => {
        await tx`select 1`
        await database.sql`select pg_terminate_backend(${pid})`
        await tx`select 2`
      })
      await expect(transaction).rejects.toThrow()
      // With one connection, a connection parked in the pool's "full" queue would leave this waiting for ever.
      const [row] = await withTimeout(pool<{ one: number }[]>`select 1 as one`.execute(), 5000, 'the pool after a lost connection')
      expect(row!.one).toBe(1)
      await withTimeout(pool.end(), 5000, 'closing the pool')
    } finally {
      await database.drop()
    }
  })
})

describe('a reserved connection', () => {
  it('when it dies while reserved, then its queries fail, release is harmless, and the pool goes on serving', async () => {
    const database = await createTestDatabase()
    const pool = connect(database.url, { max: 1 })
    try {
      const reserved = await pool.reserve()
      const [backend] = await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`
      await database.sql`select pg_terminate_backend(${backend!.pid})`
      await expect(reserved`select 2`).rejects.toThrow()
      await new Promise((resolve) => setTimeout(resolve, 100)) // the socket has closed and the pool has it back
      reserved.release()
      // A query sent in the instant between the socket's error and its close fails too (503 for its request);
      // the next one is served by a new connection.
      let failures = 0
      for (;;) {
        const answer = await withTimeout(pool<{ one: number }[]>`select 1 as one`.execute(), 5000, 'the pool after a lost reserved connection').catch(
          (error: { code?: string }) => error,
        )
        if (Array.isArray(answer)) break
        expect(answer.code).toBe('CONNECTION_CLOSED')
        expect(++failures).toBeLessThanOrEqual(1)
      }
      // The pool's single connection is usable again, and reservable.
      const again = await withTimeout(pool.reserve(), 5000, 'reserving again')
      expect((await again<{ two: number }[]>`select 2 as two`)[0]!.two).toBe(2)
      again.release()
      await withTimeout(pool.end(), 5000, 'closing the pool')
    } finally {
      await database.drop()
    }
  })
})
