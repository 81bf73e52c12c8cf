// Completed keys that were replayed, remembered in this process, so that the next replays of them (a client
// retrying in a loop, a retry storm after an outage) cost no round trip and no database time at all.
//
// Safe because a completed key never changes before it expires: its fingerprint and response are written once,
// and only an expired key can be taken over (takeOver in claims.ts) or reaped. So what is found here is what the
// database would answer, on every instance alike. An entry is dropped EXPIRY_MARGIN_MS before its key expires,
// timed from the remaining lifetime PostgreSQL reported (counted from before the question was sent), so clock skew
// between hosts cannot make it outlive the
// key; and on two local clocks, whichever runs out first: the monotonic one does not move while the host is
// suspended, the wall clock may be set back.
import type { StoredResponse } from './response.js'
import type { KeyScope } from './store.js'

export interface CompletedKey {
  fingerprint: Buffer
  response: StoredResponse
}

const EXPIRY_MARGIN_MS = 60_000

export class ReplayCache {
  private readonly entries = new Map<string, CompletedKey & { dropAt: { monotonic: number; wall: number } }>()

  /** At most `maxEntries` keys (oldest first out); 0 remembers nothing. */
  constructor(private readonly maxEntries: number) {}

  get(scope: KeyScope): CompletedKey | undefined {
    const name = entryName(scope)
    const entry = this.entries.get(name)
    if (!entry) return undefined
    if (entry.dropAt.monotonic > performance.now() && entry.dropAt.wall > Date.now()) return entry
    this.entries.delete(name)
    return undefined
  }

  /**
   * Remembers a completed key that had `expiresInMs` left, as PostgreSQL counted it at the latest at `askedAt`
   * (the clocks read before the statement was sent). Timed from then, not from now: a process that stalled after
   * the answer came back must not keep the entry past the key's expiry.
   */
  set(
    scope: KeyScope,
    completed: CompletedKey,
    expiresInMs: number,
    askedAt = { monotonic: performance.now(), wall: Date.now() },
  ): void {
    if (this.maxEntries <= 0 || expiresInMs <= EXPIRY_MARGIN_MS) return
    const name = entryName(scope)
    // Map iterates in insertion order: the first entry is the oldest.
    const oldest = this.entries.keys().next()
    if (!this.entries.has(name) && this.entries.size >= this.maxEntries && !oldest.done)
      this.entries.delete(oldest.value)
    const keep = expiresInMs - EXPIRY_MARGIN_MS
    this.entries.set(name, {
      fingerprint: completed.fingerprint,
      response: completed.response,
      dropAt: { monotonic: askedAt.monotonic + keep, wall: askedAt.wall + keep },
    })
  }
}

// Keys never cross tenants or endpoints: the name holds all three parts, each unambiguous (NUL never occurs in them).
function entryName(scope: KeyScope): string {
  return `${scope.accountId}\0${scope.endpoint}\0${scope.key}`
}
