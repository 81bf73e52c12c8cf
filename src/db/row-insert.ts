// A row to insert, as data rather than as a statement: a transaction sends it as a plain INSERT ... VALUES of
// its own (insertRow), and the commit batcher (src/idempotency/commits.ts) inserts the rows of many requests,
// table by table, in one statement: one array per column (columnArray), cast to the column's type.
import { arrayLiteral } from './array-literal.js'
import type { Sql, Transaction } from './connect.js'

export interface RowInsert {
  table: string
  /** Column name to value: strings, numbers, booleans, Dates, null, and objects for jsonb columns. */
  row: Record<string, unknown>
}

/** The INSERT of one row, not yet run: `db` is where it will run. */
export function insertRow(db: Sql | Transaction, { table, row }: RowInsert) {
  return db`insert into ${db(table)} ${db(row)}`
}

/**
 * Column names, quoted, as a fragment. postgres.js reads `insert into t (${sql(columns)})` as its own insert
 * helper and writes a VALUES list there, so the list is spelled out here.
 */
export function columnList(db: Sql | Transaction, columns: string[]) {
  return db.unsafe(columns.map(quoted).join(', '))
}

/**
 * The values of one column of many rows as an array of its type, `cast('{...}' as type[])`: PostgreSQL reads
 * each value with the type's own input function, as it reads a VALUES parameter.
 */
export function columnArray(db: Sql | Transaction, type: string, values: unknown[]) {
  return db`cast(${arrayLiteral(values.map(asText))} as ${db.unsafe(type)}[])`
}

/** Each column's type, as format_type spells it, read once per table and process. */
export function columnTypes(sql: Sql, table: string): Promise<Map<string, string>> {
  let types = knownTypes.get(table)
  if (!types) {
    types = sql<{ name: string; type: string }[]>`
      select attname as name, format_type(atttypid, atttypmod) as type from pg_attribute
      where attrelid = ${table}::regclass and attnum > 0 and not attisdropped`.then(
      (rows) => new Map(rows.map((row) => [row.name, row.type])),
    )
    // A failed lookup (a lost connection) is asked again next time.
    types.catch(() => knownTypes.delete(table))
    knownTypes.set(table, types)
  }
  return types
}
const knownTypes = new Map<string, Promise<Map<string, string>>>()

/** A value as the text PostgreSQL's input functions read: ISO timestamps, JSON for objects, null as NULL. */
function asText(value: unknown): string | number | null {
  if (value === null || value === undefined) return null
  if (value instanceof Date) return value.toISOString()
  if (typeof value === 'object') return JSON.stringify(value)
  if (typeof value === 'boolean') return String(value)
  return value as string | number
}

function quoted(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`
}
