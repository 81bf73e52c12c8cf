// npm run --silent key:create -- --account acct_...   a new key for the account (printed once)
// npm run --silent key:list -- --account acct_...     its keys: id, prefix, created_at, revoked_at
// npm run --silent key:revoke -- --key key_...        refused by every instance within AUTH_CACHE_SECONDS
// Rotation: create a new key, deploy it, then revoke the old one; both work in between.
import { parseArgs } from 'node:util'
import { createApiKey, listApiKeys, revokeApiKey } from '../accounts/api-keys.js'
import { loadConfig } from '../config.js'
import { openDatabase } from '../db/database.js'
import { main } from './main.js'

const [command, ...rest] = process.argv.slice(2)
const { values } = parseArgs({ args: rest, options: { account: { type: 'string' }, key: { type: 'string' } } })
const usage = 'usage: key:create -- --account acct_... | key:list -- --account acct_... | key:revoke -- --key key_...'
// Only the shape of the arguments here: an id that names nothing is answered by the database ("no account ...").
if (
  !(command === 'create' || command === 'list'
    ? (values.account ?? '').startsWith('acct_')
    : command === 'revoke' && (values.key ?? '').startsWith('key_'))
) {
  console.error(usage)
  process.exit(2)
}
/** An argument the check above made sure of. */
const required = (value: string | undefined): string => value ?? ''

await main(`key:${command}`, async () => {
  const config = loadConfig()
  const database = await openDatabase(config)
  try {
    if (command === 'create') {
      const created = await createApiKey(database.sql, required(values.account), config.API_KEY_MODE)
      if (!created) throw new Error(`no account ${values.account}`)
      console.log(JSON.stringify({ key_id: created.id, api_key: created.api_key }))
    } else if (command === 'list') {
      for (const key of await listApiKeys(database.sql, required(values.account))) console.log(JSON.stringify(key))
    } else if (!(await revokeApiKey(database.sql, required(values.key)))) {
      throw new Error(`no active key ${values.key}`)
    } else {
      console.log(
        JSON.stringify({
          key_id: values.key,
          revoked: true,
          refused_everywhere_within_seconds: config.AUTH_CACHE_SECONDS,
        }),
      )
    }
  } finally {
    await database.close()
  }
})
