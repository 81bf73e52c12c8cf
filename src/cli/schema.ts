// npm run schema: writes db/schema.sql, every table, view and index as the migrations leave them
// (src/db/schema-text.ts), from the database the service opens (migrated on open). Run it after adding a migration;
// test/db/schema.test.ts fails while the committed file differs.
import { writeFile } from 'node:fs/promises'
import { loadConfig } from '../config.js'
import { openDatabase } from '../db/database.js'
import { schemaText } from '../db/schema-text.js'
import { main } from './main.js'

const SCHEMA_PATH = new URL('../../db/schema.sql', import.meta.url)

await main('schema', async () => {
  const database = await openDatabase(loadConfig())
  try {
    const text = await schemaText(database.sql)
    await writeFile(SCHEMA_PATH, text)
    console.log(`wrote db/schema.sql (${text.split('\n').length} lines)`)
  } finally {
    await database.close()
  }
})
