// npm run --silent account:link -- --account ACCOUNT --processor-account acct_… | --unlink
// Links an account of this service to a connected account at the processor (Stripe Connect): its new charges are
// then made there, each keeping the account it was made on. Operator-only: no API key can do this. Prints the
// account as {"id":...,"processorAccount":...}. Uses the server's database, as account:create does.
import { parseArgs } from 'node:util'
import { linkProcessorAccount } from '../accounts/api-keys.js'
import { loadConfig } from '../config.js'
import { openDatabase } from '../db/database.js'
import { main } from './main.js'

const { values } = parseArgs({
  options: { account: { type: 'string' }, 'processor-account': { type: 'string' }, unlink: { type: 'boolean' } },
})
const processorAccount = values.unlink ? null : values['processor-account']
if (
  !values.account ||
  processorAccount === undefined ||
  (values.unlink && values['processor-account'] !== undefined) ||
  (processorAccount !== null && !/^acct_[A-Za-z0-9]{1,64}$/.test(processorAccount))
) {
  console.error(
    'usage: npm run --silent account:link -- --account ACCOUNT (--processor-account acct_... | --unlink)   ' +
      '(the processor account: Stripe’s id of the connected account)',
  )
  process.exit(2)
}

await main('account:link', async () => {
  const config = loadConfig()
  // Only Stripe has connected accounts: a link elsewhere would leave the account's events applying to nothing.
  if (processorAccount !== null && config.PROCESSOR !== 'stripe')
    throw new Error(`PROCESSOR is ${config.PROCESSOR}: only Stripe has connected accounts to link to`)
  const database = await openDatabase(config)
  try {
    const linked = await linkProcessorAccount(database.sql, values.account as string, processorAccount)
    if (!linked) throw new Error(`no account ${values.account}`)
    console.log(JSON.stringify(linked))
  } finally {
    await database.close()
  }
})
