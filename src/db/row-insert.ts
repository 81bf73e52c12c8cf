// A row to insert, as data rather than as a statement: a transaction sends it as a statement of its own
// (insertRow), and the commit batcher (src/idempotency/commits.ts) inserts the rows of many requests, table by
// table, in one statement. Either way PostgreSQL reads the row from JSON (jsonb_populate_record), so a value is
// converted to its column's type in one place, the same way on both paths.
import type { Sql, Transaction } from './connect.js'

export interface RowInsert {
  table: string
  /** Column name to value; a Date becomes its ISO string, an object a JSON object (for jsonb columns). */
  row: Record<string, unknown>
}

/** The INSERT of one row, not yet run: `db` is where it will run. */
export function insertRow(db: Sql | Transaction, { table, row }: RowInsert) {
  const columns = columnList(db, Object.keys(row))
  return db`insert into ${db(table)} (${columns}) select ${columns} from jsonb_populate_record(null::${db(table)}, ${db.json(row as never)})`
}

/**
 * Column names, quoted, as a fragment. postgres.js reads `insert into t (${sql(columns)})` as its own insert
 * helper and writes a VALUES list there, so the list is spelled out here.
 */
export function columnList(db: Sql | Transaction, columns: string[]) {
  return db.unsafe(columns.map((column) => `"${column.replaceAll('"', '""')}"`).join(', '))
}
