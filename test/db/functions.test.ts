// db/functions.sql is the readable current text of every SQL function and trigger: the same, as PostgreSQL reads
// them, as what the migrations leave, and naming every one of them. A migration that redefines a function without
// changing the file (or the other way round) fails here, naming the function.
import { readFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Sql, Transaction } from '../../src/db/connect.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

const FILE = new URL('../../db/functions.sql', import.meta.url)
let database: TestDatabase

beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(() => database?.drop())

/** The service's functions and triggers as PostgreSQL prints them (graphile-worker's schema is its own). */
async function definitions(sql: Sql | Transaction): Promise<Map<string, string>> {
  const functions = await sql<{ name: string; definition: string }[]>`
    select p.proname as name, pg_get_functiondef(p.oid) as definition
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'public' and p.prokind = 'f'`
  const triggers = await sql<{ name: string; definition: string }[]>`
    select t.tgname as name, pg_get_triggerdef(t.oid) as definition
    from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and not t.tgisinternal`
  return new Map([
    ...functions.map((row) => [`function ${row.name}`, row.definition] as const),
    ...triggers.map((row) => [`trigger ${row.name}`, row.definition] as const),
  ])
}

describe('db/functions.sql', () => {
  it('when it is run on a migrated database, then every function and trigger is as the migrations left it', async () => {
    const text = await readFile(FILE, 'utf8')
    const migrated = await definitions(database.sql)
    const named = [
      ...[...text.matchAll(/create or replace function (\w+)/g)].map((match) => `function ${match[1]}`),
      ...[...text.matchAll(/create (?:constraint )?trigger (\w+)/g)].map((match) => `trigger ${match[1]}`),
    ]
    expect(named.sort(), 'the file names every function and trigger of the migrations, and no other').toEqual(
      [...migrated.keys()].sort(),
    )
    const rollback = new Error('rollback')
    const fromFile = await database.sql
      .begin(async (tx) => {
        await tx.unsafe(text)
        const read = await definitions(tx)
        throw Object.assign(rollback, { read })
      })
      .catch((error: Error & { read?: Map<string, string> }) => {
        if (error !== rollback) throw error
        return error.read ?? new Map<string, string>()
      })
    for (const [name, definition] of migrated) expect(fromFile.get(name), name).toBe(definition)
  })
})
