// One owner per table: every statement that writes a table is in its module, and other modules call it, so a reader
// finds every way a key, a charge or a delivery can change in one place. Every table the migrations create is held
// to it, a fork's too (its module is its directory under src/); the ledger, charges and refunds are held to one file.
import { readFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { typescriptFiles } from '../helpers/source-files.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

const OWNED_BY_ONE_FILE: Record<string, string> = {
  charges: 'src/charges/repository.ts',
  refunds: 'src/refunds/repository.ts',
  // And so its entries, which are in its rows (ledger_entries is a view of them).
  ledger_transactions: 'src/ledger/repository.ts',
}

/** The files of src that write `table` (insert, update or delete), by their text. */
function writersOf(table: string, sources: Map<string, string>): string[] {
  const name = table.replace('.', '\\.')
  const writes = new RegExp(`\\b(insert\\s+into|update|delete\\s+from)\\s+${name}\\b`, 'i')
  return [...sources].filter(([, text]) => writes.test(text)).map(([file]) => file)
}

let database: TestDatabase
let tables: string[]
const sources = new Map<string, string>()
beforeAll(async () => {
  database = await createTestDatabase()
  const rows = await database.sql<{ name: string }[]>`
    select case when table_schema = 'public' then table_name else table_schema || '.' || table_name end as name
    from information_schema.tables
    where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema', 'graphile_worker',
      'graphile_migrate')
    order by 1`
  tables = rows.map((row) => row.name)
  for (const file of await typescriptFiles('src')) sources.set(file, await readFile(file, 'utf8'))
})
afterAll(() => database?.drop())

describe('table owners', () => {
  it('when a table the migrations create is written from more than one module of src, or from none, then it is named', () => {
    expect(tables).toEqual(expect.arrayContaining(['charges', 'idempotency_keys', 'simulated_processor.operations']))
    const strays: string[] = []
    for (const table of tables) {
      const modules = new Set(writersOf(table, sources).map((file) => dirname(file)))
      if (modules.size !== 1)
        strays.push(`${table} is written from ${modules.size ? [...modules].sort().join(', ') : 'no module'}`)
    }
    expect(strays).toEqual([])
  })

  it('when a file other than its repository writes charges, refunds or the ledger, then it is named', () => {
    const strays = Object.entries(OWNED_BY_ONE_FILE).flatMap(([table, owner]) =>
      writersOf(table, sources)
        .filter((file) => file !== owner)
        .map((file) => `${file} writes ${table} (its owner: ${owner})`),
    )
    expect(strays).toEqual([])
  })
})
