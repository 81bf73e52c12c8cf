// npm run --silent account:create -- --name NAME [--field api_key]
// Creates an account and prints {"account_id":...,"api_key":...} as one JSON line (or one field's value alone). Uses
// the server's database
// (DATABASE_URL, or the embedded one, joined if the server is running and started for the moment if not).
import { parseArgs } from 'node:util'
import { createAccount } from '../accounts/api-keys.js'
import { loadConfig } from '../config.js'
import { openDatabase } from '../db/database.js'
import { main } from './main.js'

const { values } = parseArgs({ options: { name: { type: 'string' }, field: { type: 'string' } } })
const name = values.name?.trim()
if (
  !name ||
  name.length > 200 ||
  (values.field !== undefined && values.field !== 'api_key' && values.field !== 'account_id')
) {
  console.error(
    'usage: npm run --silent account:create -- --name NAME [--field api_key|account_id]   (a name of 1 to 200 ' +
      'characters)',
  )
  process.exit(2)
}

await main('account:create', async () => {
  const config = loadConfig()
  const database = await openDatabase(config)
  try {
    const created = await createAccount(database.sql, name, config.API_KEY_MODE)
    // --field api_key: that value alone, for API_KEY=$(...) in a shell.
    console.log(
      values.field === 'api_key' || values.field === 'account_id' ? created[values.field] : JSON.stringify(created),
    )
  } finally {
    await database.close()
  }
})
