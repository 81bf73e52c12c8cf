import { afterEach, describe, expect, it, vi } from 'vitest'
import { ReplayCache } from '../../src/idempotency/replay-cache.js'

const response = (text: string) => ({
  status: 201,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(text),
})
const scope = (key: string, accountId = 'acct_1') => ({ accountId, endpoint: 'POST /v1/charges', key })
const DAY_MS = 86_400_000

describe('ReplayCache', () => {
  it('when full, then the oldest key goes first', () => {
    const cache = new ReplayCache(2)
    for (const key of ['a', 'b', 'c'])
      cache.set(scope(key), { fingerprint: Buffer.alloc(32), response: response(key) }, DAY_MS)
    expect(cache.get(scope('a'))).toBeUndefined()
    expect(cache.get(scope('b'))?.response.body.toString()).toBe('b')
    expect(cache.get(scope('c'))?.response.body.toString()).toBe('c')
  })

  it('when the same key is set again, then nothing else is pushed out', () => {
    const cache = new ReplayCache(2)
    for (const key of ['a', 'b', 'b'])
      cache.set(scope(key), { fingerprint: Buffer.alloc(32), response: response(key) }, DAY_MS)
    expect(cache.get(scope('a'))).toBeDefined()
  })

  it('when keys differ only by account or endpoint, then they are different entries', () => {
    const cache = new ReplayCache(10)
    cache.set(scope('k', 'acct_1'), { fingerprint: Buffer.alloc(32), response: response('one') }, DAY_MS)
    expect(cache.get(scope('k', 'acct_2'))).toBeUndefined()
    expect(cache.get({ ...scope('k', 'acct_1'), endpoint: 'POST /v1/refunds' })).toBeUndefined()
  })

  it('when a key has a minute or less to live, or the size is 0, then it is not remembered', () => {
    const cache = new ReplayCache(10)
    cache.set(scope('soon'), { fingerprint: Buffer.alloc(32), response: response('soon') }, 60_000)
    expect(cache.get(scope('soon'))).toBeUndefined()
    const off = new ReplayCache(0)
    off.set(scope('a'), { fingerprint: Buffer.alloc(32), response: response('a') }, DAY_MS)
    expect(off.get(scope('a'))).toBeUndefined()
  })
})

describe('ReplayCache clocks', () => {
  afterEach(() => vi.useRealTimers())

  it('when the wall clock passes the key’s lifetime (a host that slept), then the entry is gone even though the monotonic clock stood still', () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const cache = new ReplayCache(10)
    cache.set(scope('slept'), { fingerprint: Buffer.alloc(32), response: response('slept') }, 120_000)
    expect(cache.get(scope('slept'))).toBeDefined()
    vi.setSystemTime(Date.now() + 61_000)
    expect(cache.get(scope('slept'))).toBeUndefined()
  })
})

describe('ReplayCache timing', () => {
  it('when the process stalled between asking PostgreSQL and storing the answer, then the entry is timed from the question, not from now', () => {
    const cache = new ReplayCache(10)
    // Asked two minutes ago with 150 s left: the key expires in 30 s, so with a minute's margin it is not kept.
    const askedAt = { monotonic: performance.now() - 120_000, wall: Date.now() - 120_000 }
    cache.set(scope('stalled'), { fingerprint: Buffer.alloc(32), response: response('stalled') }, 150_000, askedAt)
    expect(cache.get(scope('stalled'))).toBeUndefined()
    cache.set(scope('prompt'), { fingerprint: Buffer.alloc(32), response: response('prompt') }, 150_000, {
      monotonic: performance.now(),
      wall: Date.now(),
    })
    expect(cache.get(scope('prompt'))).toBeDefined()
  })
})
