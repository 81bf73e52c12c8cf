// Inserts gathered across the works that share one completion transaction (src/idempotency/completions.ts), so that
// twenty new charges cost one insert per table, not twenty. A table's owner declares its insert once, for many rows
// (`gatheredInsert`: one statement whose text does not change with the number of rows, so it is prepared once);
// written in an ordinary transaction it goes out at once, for its one row. In a completion's transaction the row
// waits, and the rows of every table go out together, one statement each, when the works are done or just before
// any other statement the transaction sends, whichever comes first: every statement still sees every row inserted
// before it, as if each had gone out alone.
import type { Sql, Transaction } from './connect.js'

/** One table's insert of many rows, in one statement. */
export type InsertRows<Row> = (sql: Sql | Transaction, rows: Row[]) => Promise<unknown>

/** Inserts `row` with `insertRows`: at once, or gathered when `sql` is a completion's transaction. */
export function gatheredInsert<Row>(insertRows: InsertRows<Row>) {
  return (sql: Sql | Transaction, row: Row): Promise<void> => {
    const gathering = gatherings.get(sql)
    if (!gathering) return insertRows(sql, [row]).then(() => undefined)
    gathering.add(insertRows as InsertRows<unknown>, row)
    return Promise.resolve()
  }
}

/** A completion's transaction that gathers inserts, and how its owner sends them. */
export interface Gathering {
  /** The transaction to hand to the works: `tx` itself, but for the inserts it gathers. */
  readonly tx: Transaction
  /**
   * Sends what is gathered, one statement per table, behind what `tx` has sent, and resolves once every statement
   * sent so far has answered; rejects with the first that failed (the transaction is then aborted).
   */
  flush(): Promise<void>
}

const gatherings = new WeakMap<object, Gathering & { add(insertRows: InsertRows<unknown>, row: unknown): void }>()

export function gatherInserts(tx: Transaction): Gathering {
  const waiting = new Map<InsertRows<unknown>, unknown[]>()
  const sent: Promise<unknown>[] = []
  const send = () => {
    for (const [insertRows, rows] of waiting) {
      // Sent now, in order on the transaction's connection; its answer is awaited by flush().
      const answer = insertRows(tx, rows)
      answer.catch(() => {})
      sent.push(answer)
    }
    waiting.clear()
  }
  // Every other use of the transaction sends what waits first: a query (a tagged template, unsafe, file), a savepoint.
  const gathered = new Proxy(tx, {
    apply(target, self, args) {
      send()
      return Reflect.apply(target, self, args)
    },
    get(target, property) {
      const value = Reflect.get(target, property)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        send()
        return Reflect.apply(value, target, args)
      }
    },
  })
  const gathering = {
    tx: gathered,
    add(insertRows: InsertRows<unknown>, row: unknown) {
      const rows = waiting.get(insertRows)
      if (rows) rows.push(row)
      else waiting.set(insertRows, [row])
    },
    async flush() {
      send()
      await Promise.all(sent)
    },
  }
  gatherings.set(gathered, gathering)
  return gathering
}
