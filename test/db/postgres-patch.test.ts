// patches/postgres+3.4.9.patch is applied by `npm ci` (postinstall: patch-package). Without it a closed
// connection can crash the process and a busy pool slows down over time; see docs/operations.md.
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { connect } from '../../src/db/connect.js'
import { isDatabaseUnavailable, withTimeout } from '../../src/db/errors.js'
import { startCuttingProxy } from '../helpers/cutting-proxy.js'
import { createTestDatabase } from '../helpers/database.js'

// The package's main entry is cjs/src/index.js; its root is two levels up.
const postgresDir = join(dirname(createRequire(import.meta.url).resolve('postgres')), '..', '..')
const { default: Queue } = (await import(join(postgresDir, 'src', 'queue.js'))) as {
  default: (initial?: unknown[]) => Queue
}

interface Queue {
  length: number
  push(x: unknown): unknown
  shift(): unknown
  remove(x: unknown): unknown
}

describe('the postgres.js patch', () => {
  it('when installed, then both the ESM and CommonJS builds carry it', async () => {
    for (const build of ['src', 'cjs/src']) {
      for (const file of ['connection.js', 'queue.js', 'query.js', 'result.js']) {
        expect(await readFile(join(postgresDir, build, file), 'utf8'), `${build}/${file}`).toContain(
          'patched (payments-api)',
        )
      }
    }
  })

  it('when loaded, then each patched file of both builds loads, by import and by require, with its species fix', async () => {
    // In a fresh Node: a patch that breaks a build (a name the CommonJS file never binds) fails at load time.
    const script = `
      const { createRequire } = require('node:module')
      const { pathToFileURL } = require('node:url')
      const dir = ${JSON.stringify(postgresDir)}
      ;(async () => {
        const cjs = require('postgres')
        if (typeof cjs !== 'function') throw new Error('require("postgres") is not the driver')
        const esm = (await import(pathToFileURL(dir + '/src/index.js'))).default
        if (typeof esm !== 'function') throw new Error('import of the ESM build is not the driver')
        for (const file of ['connection.js', 'queue.js', 'query.js', 'result.js', 'index.js']) {
          require(dir + '/cjs/src/' + file)
          await import(pathToFileURL(dir + '/src/' + file))
        }
        const Result = require(dir + '/cjs/src/result.js')
        const EsmResult = (await import(pathToFileURL(dir + '/src/result.js'))).default
        for (const R of [Result, EsmResult]) if (new R().map((x) => x).constructor !== Array) throw new Error('species')
        console.log('loaded')
      })().catch((error) => { console.error(error); process.exit(1) })`
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script])
    expect(stdout.trim()).toBe('loaded')
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

  it('when results are mapped or queries chained, then they make plain arrays and promises', async () => {
    const database = await createTestDatabase()
    try {
      const rows = await database.sql<{ one: number }[]>`select 1 as one`
      expect(rows.map((row) => row.one).constructor).toBe(Array)
      expect(rows.slice(0).constructor).toBe(Array)
      expect(database.sql`select 1`.then(() => undefined).constructor).toBe(Promise)
    } finally {
      await database.drop()
    }
  })

  it('when a pool runs many queries, then V8 optimizes its Query and Result instead of aborting them over and over', async () => {
    const database = await createTestDatabase()
    // Twenty clients querying for a second and a half, in a Node of its own that reports what its optimizing
    // compiler gave up on. With the species getters of postgres.js 3.4.9 it aborted Query or Result about 90
    // times in that span (each abort a compilation thrown away, and the code left unoptimized); patched, none.
    const script = `
      const { default: postgres } = await import(${JSON.stringify(join(postgresDir, 'src', 'index.js'))})
      const sql = postgres(${JSON.stringify(database.url)}, { max: 10, onnotice: () => {} })
      const until = Date.now() + 1500
      let n = 0
      await Promise.all(Array.from({ length: 20 }, async () => { while (Date.now() < until) await sql\`select \${n++}::int as n, 'x' as s\` }))
      await sql.end()`
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--trace-opt', '--input-type=module', '-e', script],
        { maxBuffer: 64 * 1024 * 1024 },
      )
      const aborted = stdout
        .split('\n')
        .filter((line) => /aborted optimizing .*<JSFunction (Query|Result|ReadyForQuery) /.test(line))
      expect(aborted.length, aborted.slice(0, 3).join('\n')).toBeLessThan(5)
    } finally {
      await database.drop()
    }
  })

  it('when a new connection is terminated while it fetches array types, then the waiting query runs on the next one', async () => {
    const database = await createTestDatabase()
    // The first array-types query is answered as pg_terminate_backend would (a FATAL 57P01, then the socket closes).
    const proxy = await startCuttingProxy(database.url, (chunk) => chunk.includes('pg_type'))
    const pool = connect(proxy.url, { max: 1 })
    try {
      // Unpatched, this query failed with the dead connection's 57P01, and the array-types query's own failure
      // was an unhandled rejection (Vitest fails the run on one).
      const [row] = await withTimeout(
        pool<{ one: number }[]>`select 1 as one`.execute(),
        5000,
        'the query after a terminated start-up',
      )
      expect(row!.one).toBe(1)
      expect(proxy.cuts()).toBe(1)
      // And array types were fetched on the new connection: an array parameter round-trips.
      const [array] = await pool<{ ids: number[] }[]>`select ${pool.array([1, 2])}::int[] as ids`
      expect(array!.ids).toEqual([1, 2])
    } finally {
      await withTimeout(pool.end(), 5000, 'closing the pool')
      await proxy.close()
      await database.drop()
    }
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
      const [row] = await withTimeout(
        pool<{ one: number }[]>`select 1 as one`.execute(),
        5000,
        'the pool after a lost connection',
      )
      expect(row!.one).toBe(1)
      await withTimeout(pool.end(), 5000, 'closing the pool')
    } finally {
      await database.drop()
    }
  })

  it('when a statement is never answered (its connection gone quiet), then what the connection owed fails with ANSWER_TIMEOUT and the pool serves the next query', async () => {
    const database = await createTestDatabase()
    // The statement carrying the marker, and everything after it on that connection, is swallowed; nothing closes.
    // Through PgBouncer this is a server dropped mid-statement while the client is kept, idle, owed nothing.
    const quiet = await startCuttingProxy(database.url, (chunk) => chunk.includes('lost-answer'), 1, 'silence')
    // A statement timeout of 200 ms bounds the silence at 5.2 s (src/db/connect.ts).
    const pool = connect(quiet.url, { max: 1, statementTimeoutMs: 200 })
    try {
      await pool`select 1`
      const lost = pool`select 'lost-answer' as marker`.execute()
      // Sent on the same connection behind it (the pool's only one), so owed by it too.
      const behind = pool`select 2 as two`.execute()
      const [lostError, behindError] = await Promise.all([
        lost.catch((error: unknown) => error),
        behind.catch((error: unknown) => error),
      ])
      expect(lostError).toMatchObject({ code: 'ANSWER_TIMEOUT' })
      expect(behindError).toMatchObject({ code: 'ANSWER_TIMEOUT' })
      expect(isDatabaseUnavailable(lostError)).toBe(true)
      // Unpatched, both waited for ever, and so did every later query of the pool.
      const [row] = await withTimeout(
        pool<{ one: number }[]>`select 1 as one`.execute(),
        5000,
        'the pool after a silent connection',
      )
      expect(row!.one).toBe(1)
      expect(quiet.cuts()).toBe(1)
    } finally {
      await withTimeout(pool.end(), 5000, 'closing the pool')
      await quiet.close()
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
        const answer = await withTimeout(
          pool<{ one: number }[]>`select 1 as one`.execute(),
          5000,
          'the pool after a lost reserved connection',
        ).catch((error: { code?: string }) => error)
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
