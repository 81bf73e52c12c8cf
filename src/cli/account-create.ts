// npm run --silent account:create -- --name NAME
// Creates an account and prints {"account_id":...,"api_key":...} as one JSON line. Uses the server's database
// (DATABASE_URL, or the embedded one, joined if the server is running and started for the moment if not).
import { parseArgs } from 'node:util'
import { createAccount } from '../accounts/api-keys.js'
import { loadConfig } from '../config.js'
import { openDatabase } from '../db/database.js'
import { main } from './main.js'

const { values } = parseArgs({ options: { name: { type: 'string' } } })
const name = values.name?.trim()
if (!name || name.length > 200) {
  console.error('usage: npm run --silent account:create -- --name NAME   (1 to 200 characters)')
  process.exit(2)
}

await main('account:create', async () => {
  const config = loadConfig()
  const database = await openDatabase(config)
  try {
    console.log(JSON.stringify(await createAccount(database.sql, name, config.API_KEY_MODE)))
  } finally {
    await database.close()
  }
})
