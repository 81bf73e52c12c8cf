// Positive API-key lookups, remembered for a few seconds: most requests then authenticate without a round trip.
// A revoked key keeps working on an instance for at most `ttlMs` (AUTH_CACHE_SECONDS, 5 s by default), on every
// instance alike, and so does an account's link to a connected account once changed; unknown or revoked keys are
// never remembered, so a new key works at once.
/** `Account`: what a lookup found for the key (src/accounts/api-keys.ts AuthenticatedAccount). */
export class ApiKeyCache<Account = unknown> {
  private readonly entries = new Map<string, { account: Account; expiresAt: number }>()

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(keyHash: string): Account | undefined {
    const entry = this.entries.get(keyHash)
    if (!entry) return undefined
    if (entry.expiresAt > performance.now()) return entry.account
    this.entries.delete(keyHash)
    return undefined
  }

  set(keyHash: string, account: Account): void {
    if (this.ttlMs <= 0) return
    // Oldest first out: a Map iterates in insertion order.
    const oldest = this.entries.keys().next()
    if (this.entries.size >= this.maxEntries && !oldest.done) this.entries.delete(oldest.value)
    this.entries.set(keyHash, { account, expiresAt: performance.now() + this.ttlMs })
  }
}
