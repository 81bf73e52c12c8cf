// The last phase of an idempotent request: the route's writes and its key's completion, in one transaction. The
// requests that complete at the same moment share that transaction (src/db/batcher.ts): PostgreSQL charges per
// commit (a WAL flush, a round trip for BEGIN and COMMIT) more than per statement, so under load twenty
// completions cost little more than one. Sharing is invisible to a route: its work runs alone, in order, on the
// one transaction, seeing what the works before it wrote, exactly as in a transaction of its own. Their inserts are
// gathered, one statement per table (src/db/gathered-inserts.ts); works that only insert (a new charge) are sent
// with the keys' completion as one batch, one round trip and no BEGIN or COMMIT.
import type { Sql, Transaction } from '../db/connect.js'
import { Batcher, type SharedStatements } from '../db/batcher.js'
import { gatherInTransaction, gatherWithoutTransaction, NeedsTransaction } from '../db/gathered-inserts.js'
import { type RouteResponse, type StoredResponse, toStoredResponse } from './response.js'
import { type Claim, completeKeys, type KeyCompletion } from './store.js'

interface Completion {
  /** Null for a request sent without a key: its writes alone. */
  claim: Claim | null
  work: (tx: Transaction) => Promise<RouteResponse>
}

// As for claims: a cap that keeps one transaction, and the wait of the requests queued behind it, short.
const MAX_COMPLETIONS_PER_TRANSACTION = 50

export class Completions {
  readonly #batches: Batcher<Completion, StoredResponse>

  constructor(sql: Sql, statements: SharedStatements = {}) {
    this.#batches = new Batcher((completions) => completeTogether(sql, completions), {
      maxSize: MAX_COMPLETIONS_PER_TRANSACTION,
      ...statements,
    })
  }

  /**
   * Runs `work` and completes the key with the response it returns, atomically. Fails with IK409 (isTakenOver),
   * with nothing written, when the claim is no longer this holder's (its lease ran out and another request took
   * the key over); with the work's own error when it throws.
   */
  complete(claim: Claim | null, work: (tx: Transaction) => Promise<RouteResponse>): Promise<StoredResponse> {
    return this.#batches.submit({ claim, work })
  }
}

/**
 * One transaction for many completions: each work in turn, their inserts gathered, then the inserts, one statement per
 * table, and the keys' completions, one statement, sent together. First as if the works only insert: they run with no
 * transaction, and what they gathered goes out as one batch, which PostgreSQL runs as one transaction. A work that
 * sends a statement of its own (a read, a lock, an update) stops that, and all of them run again in a transaction,
 * where what waits is sent before any other statement. Any failure rolls all of them back, and the batcher then runs
 * each completion alone, so that only the one that failed fails: a work may therefore run more than once, and must
 * write only through `tx`.
 */
async function completeTogether(sql: Sql, completions: Completion[]): Promise<StoredResponse[]> {
  const gathering = gatherWithoutTransaction()
  const done = await runWorks(completions, gathering.tx).catch((error: unknown) => {
    if (error instanceof NeedsTransaction) return undefined
    throw error
  })
  if (done) {
    await sql.batch([...gathering.take(sql), ...completeKeys(sql, done.keys)])
    return done.responses
  }
  return sql.begin(async (tx) => {
    const inTransaction = gatherInTransaction(tx)
    const { responses, keys } = await runWorks(completions, inTransaction.tx)
    await Promise.all([...inTransaction.inserts(), ...completeKeys(tx, keys)])
    return responses
  })
}

/** Each work in turn: their responses, and the keys to complete with them. */
async function runWorks(completions: Completion[], tx: Transaction) {
  const responses: StoredResponse[] = []
  const keys: KeyCompletion[] = []
  for (const { claim, work } of completions) {
    const response = toStoredResponse(await work(tx))
    responses.push(response)
    if (claim) keys.push({ claim, response })
  }
  return { responses, keys }
}
