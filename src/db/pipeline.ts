// Transactions sent as one pipeline. BEGIN goes out with the first statement, and statements whose answers are
// not needed are sent without waiting for them (`send`): a transaction such as "insert the charge, complete the
// key" costs one round trip instead of four. The statements still run in order, in one transaction; when one
// fails, PostgreSQL aborts the transaction, and the COMMIT that follows it rolls back instead.
import type { PendingQuery, Row } from 'postgres'
import type { Sql, Transaction } from './connect.js'

const unanswered = new WeakMap<object, Promise<unknown>[]>()

/** Sends `query` now; the transaction waits for its answer, and fails with its error, before it reports. */
export function send(tx: Transaction, query: PendingQuery<Row[]>): void {
  const pending = unanswered.get(tx)
  if (!pending) throw new Error('send() needs a transaction opened by pipelinedTransaction()')
  const answer = query.execute().then(() => undefined)
  // Awaited in order by the transaction; until then its failure must not count as unhandled.
  answer.catch(() => {})
  pending.push(answer)
}

export function sendAll(tx: Transaction, queries: PendingQuery<Row[]>[]): void {
  for (const query of queries) send(tx, query)
}

export async function pipelinedTransaction<T>(sql: Sql, work: (tx: Transaction) => Promise<T>): Promise<T> {
  const connection = await sql.reserve()
  const tx = connection as unknown as Transaction
  const pending: Promise<unknown>[] = []
  unanswered.set(tx, pending)
  let committed = false
  try {
    send(tx, connection`begin`)
    const result = await work(tx)
    send(tx, connection`commit`)
    // In sending order: the first failure is the cause; those after it only report the aborted transaction.
    for (const answer of pending) await answer
    committed = true
    return result
  } catch (error) {
    if (!committed) {
      await Promise.allSettled(pending)
      await connection`rollback`.catch(() => {})
    }
    throw error
  } finally {
    unanswered.delete(tx)
    connection.release()
  }
}
