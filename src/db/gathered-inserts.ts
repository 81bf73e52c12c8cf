// Inserts gathered across the works that complete together (src/idempotency/completions.ts), so that twenty new
// charges cost one insert per table, not twenty. A table's owner declares its insert once, for many rows
// (`gatheredInsert`: one statement whose text does not change with the number of rows, so it is prepared once); written
// in an ordinary transaction it goes out at once, for its one row. Handed a gathering's `tx`, the row waits, and the
// rows of every table go out together, one statement each:
//   - `gatherWithoutTransaction`: while the works only insert, nothing is sent at all. The completion then sends the
//     inserts and the keys' completion as one batch, in one round trip: PostgreSQL runs a batch as one transaction.
//     A work that sends any statement of its own stops it (NeedsTransaction), and the completion starts again in a
//     transaction;
//   - `gatherInTransaction`: the rows go out when the works are done, or just before any other statement the
//     transaction sends, whichever comes first, so every statement still sees every row inserted before it.
import type { PendingQuery, Row } from 'postgres'
import type { Sql, Transaction } from './connect.js'

/** One table's insert of many rows, as one statement, not yet sent. */
export type InsertRows<Item> = (sql: Sql | Transaction, rows: Item[]) => PendingQuery<Row[]>

/** Inserts `row` with `insertRows`: at once, or gathered when `sql` is a gathering's transaction. */
export function gatheredInsert<Item>(insertRows: InsertRows<Item>) {
  return async (sql: Sql | Transaction, row: Item): Promise<void> => {
    const rows = gatherings.get(sql)
    if (rows) rows.add(insertRows as InsertRows<unknown>, row)
    else await insertRows(sql, [row])
  }
}

/** A work sent a statement of its own: its completion needs a transaction (gatherWithoutTransaction). */
export class NeedsTransaction extends Error {
  constructor() {
    super('a work sent a statement of its own, outside a transaction')
  }
}

/** Each table's gathered rows, in the order their first row came. */
class Rows {
  readonly #waiting = new Map<InsertRows<unknown>, unknown[]>()

  add(insertRows: InsertRows<unknown>, row: unknown): void {
    const rows = this.#waiting.get(insertRows)
    if (rows) rows.push(row)
    else this.#waiting.set(insertRows, [row])
  }

  /** The statements that insert what waits, one per table, built on `sql` and not sent; nothing waits after it. */
  take(sql: Sql | Transaction): PendingQuery<Row[]>[] {
    const statements = [...this.#waiting].map(([insertRows, rows]) => insertRows(sql, rows))
    this.#waiting.clear()
    return statements
  }
}

const gatherings = new WeakMap<object, Rows>()

/**
 * Gathers the inserts of works that send nothing else: `tx` is no transaction, and any statement sent through it
 * throws NeedsTransaction. `take` gives the inserts, for the caller to send in a batch of its own.
 */
export function gatherWithoutTransaction(): { tx: Transaction; take(sql: Sql): PendingQuery<Row[]>[] } {
  const rows = new Rows()
  const refuse = () => {
    throw new NeedsTransaction()
  }
  const tx = new Proxy(refuse as unknown as Transaction, { apply: refuse, get: refuse })
  gatherings.set(tx, rows)
  return { tx, take: (sql) => rows.take(sql) }
}

/**
 * Gathers inserts in transaction `tx`: `gathered` is `tx` for the works, and every other use of it (a query, unsafe,
 * a savepoint) sends what waits first. `inserts` gives what still waits, to send with the transaction's last
 * statements.
 */
export function gatherInTransaction(tx: Transaction): { tx: Transaction; inserts(): PendingQuery<Row[]>[] } {
  const rows = new Rows()
  const sendWaiting = () => {
    // Sent now, in order on the transaction's connection; a failure fails the transaction, and its next statement.
    for (const statement of rows.take(tx)) statement.execute().catch(() => {})
  }
  const gathered = new Proxy(tx, {
    apply(target, self, args) {
      sendWaiting()
      return Reflect.apply(target, self, args)
    },
    get(target, property) {
      const value = Reflect.get(target, property)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        sendWaiting()
        return Reflect.apply(value, target, args)
      }
    },
  })
  gatherings.set(gathered, rows)
  return { tx: gathered, inserts: () => rows.take(tx) }
}
