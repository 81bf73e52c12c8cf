// npm run --silent account:platform-fee -- --account ACCOUNT --currency usd (--percent-basis-points N
//   --fixed-amount N | --remove)
// Sets the platform's price of the account's payments in one currency (Stripe Connect's application fee): its
// charges made on its connected account carry it from then on, taken by Stripe for the platform. Basis points are
// hundredths of a percent (100 is 1%); the fixed amount is in the currency's minor unit (cents; yen for jpy).
// Operator-only: no API key can do this. Prints {"account":...,"currency":...,"price":...}. API instances see a
// change within AUTH_CACHE_SECONDS.
import { parseArgs } from 'node:util'
import { type PlatformPrice, setPlatformPrice } from '../accounts/platform-pricing.js'
import { loadConfig } from '../config.js'
import { openDatabase } from '../db/database.js'
import { main } from './main.js'

const { values } = parseArgs({
  options: {
    account: { type: 'string' },
    currency: { type: 'string' },
    'percent-basis-points': { type: 'string' },
    'fixed-amount': { type: 'string' },
    remove: { type: 'boolean' },
  },
})
const whole = (text: string | undefined, max: number) =>
  text !== undefined && /^\d{1,8}$/.test(text) && Number(text) <= max ? Number(text) : undefined
const percentBasisPoints = whole(values['percent-basis-points'], 10_000)
const fixedAmount = whole(values['fixed-amount'], 99_999_999)
const price: PlatformPrice | null | undefined = values.remove
  ? null
  : percentBasisPoints !== undefined && fixedAmount !== undefined
    ? { percentBasisPoints, fixedAmount }
    : undefined
const setsBoth = values.remove && (values['percent-basis-points'] ?? values['fixed-amount']) !== undefined
if (!values.account || !/^[a-z]{3}$/.test(values.currency ?? '') || price === undefined || setsBoth) {
  console.error(
    'usage: npm run --silent account:platform-fee -- --account ACCOUNT --currency usd (--percent-basis-points ' +
      '0..10000 --fixed-amount 0..99999999 | --remove)   (100 basis points is 1%; the fixed amount in the ' +
      'currency’s minor unit)',
  )
  process.exit(2)
}

await main('account:platform-fee', async () => {
  const database = await openDatabase(loadConfig())
  try {
    if (!(await setPlatformPrice(database.sql, values.account as string, values.currency as string, price)))
      throw new Error(`no account ${values.account}`)
    console.log(JSON.stringify({ account: values.account, currency: values.currency, price }))
  } finally {
    await database.close()
  }
})
