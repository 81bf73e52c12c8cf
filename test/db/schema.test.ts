// db/schema.sql is every table, view and index as the migrations leave them (src/db/schema-text.ts): the committed
// file must be what a migrated database's catalog says, so that a reader can trust it for a table's whole shape.
import { readFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { schemaText } from '../../src/db/schema-text.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

const FILE = new URL('../../db/schema.sql', import.meta.url)
let database: TestDatabase

beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(() => database?.drop())

describe('db/schema.sql', () => {
  it('when the migrations change the schema, then the committed file is what they leave, or this says to run npm run schema', async () => {
    const committed = await readFile(FILE, 'utf8').catch(() => '')
    const migrated = await schemaText(database.sql)
    expect(committed === migrated, 'db/schema.sql is stale: run `npm run schema` and commit the result').toBe(true)
    expect(migrated).toMatch(/^create table idempotency_keys \(/m)
    expect(migrated).toMatch(/^create view ledger_entries as$/m)
  })

  it('when it is run with db/functions.sql on an empty database, then it makes the same schema', async () => {
    const committed = await readFile(FILE, 'utf8')
    const functions = await readFile(new URL('../../db/functions.sql', import.meta.url), 'utf8')
    // Functions first (an index calls one), then the tables, then the triggers on them.
    const definitions = functions.match(/^create or replace function [\s\S]*?\$\$;$/gm) ?? []
    const triggers = functions.match(/^create (?:constraint )?trigger [\s\S]*?;$/gm) ?? []
    expect(definitions.length).toBeGreaterThan(3)
    expect(triggers.length).toBeGreaterThan(1)
    const rollback = new Error('rollback')
    const rebuilt = await database.sql
      .begin(async (tx) => {
        await tx.unsafe('drop schema public cascade; drop schema simulated_processor cascade; create schema public')
        for (const statement of definitions) await tx.unsafe(statement)
        await tx.unsafe(committed)
        for (const statement of triggers) await tx.unsafe(statement)
        throw Object.assign(rollback, { text: await schemaText(tx) })
      })
      .catch((error: Error & { text?: string }) => {
        if (error !== rollback) throw error
        return error.text
      })
    expect(rebuilt).toBe(committed)
  })
})
