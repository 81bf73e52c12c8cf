// The last phase of an idempotent request: the route's writes and its key's completion, in one transaction. The
// requests that complete at the same moment share that transaction (src/db/batcher.ts): PostgreSQL charges per
// commit (a WAL flush, a round trip for BEGIN and COMMIT) more than per statement, so under load twenty
// completions cost little more than one. Sharing is invisible to a route: its work runs alone, in order, on the
// one transaction, seeing what the works before it wrote, exactly as in a transaction of its own.
import type { Sql, Transaction } from '../db/connect.js'
import { Batcher, type SharedStatements } from '../db/batcher.js'
import { gatherInserts } from '../db/gathered-inserts.js'
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
 * One transaction for many completions: each work in turn, their inserts gathered (src/db/gathered-inserts.ts), then
 * the inserts, one statement per table, and the keys' completions, one statement, sent together. Any failure rolls
 * all of them back, and the batcher then runs each completion alone, so that only the one that failed fails: a work
 * may therefore run twice, and must write only through `tx`.
 */
async function completeTogether(sql: Sql, completions: Completion[]): Promise<StoredResponse[]> {
  return sql.begin(async (tx) => {
    const gathering = gatherInserts(tx)
    const responses: StoredResponse[] = []
    const keys: KeyCompletion[] = []
    for (const { claim, work } of completions) {
      const response = toStoredResponse(await work(gathering.tx))
      responses.push(response)
      if (claim) keys.push({ claim, response })
    }
    await Promise.all([gathering.flush(), completeKeys(tx, keys)])
    return responses
  })
}
