// The kinds of money movement are one table (src/ledger/movements.ts): the database's CHECK on a transaction's type
// and its list of ledger accounts, the API's types, docs/ledger.md's tables and the callers of each posting are held
// to it here, and each kind's legs balance.
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import * as postings from '../../src/ledger/postings.js'
import { LEDGER_ACCOUNTS, MOVEMENTS } from '../../src/ledger/movements.js'
import { BALANCE_TRANSACTION_TYPES } from '../../src/schemas/balance.js'
import { createTestDatabase } from '../helpers/database.js'
import { typescriptFiles } from '../helpers/source-files.js'

const ROOT = new URL('../../', import.meta.url).pathname
const KINDS = Object.keys(MOVEMENTS)

/** The rows of the Markdown table whose header starts with `header`, as arrays of cells. */
async function tableOf(page: string, header: string): Promise<string[][]> {
  const lines = (await readFile(`${ROOT}${page}`, 'utf8')).split('\n')
  const start = lines.findIndex((line) => line.startsWith(`| ${header} |`))
  expect(start, `${page} has a table headed "${header}"`).toBeGreaterThan(-1)
  const rows: string[][] = []
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break
    rows.push(
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    )
  }
  return rows
}

const unquoted = (cell: string) => cell.replace(/^`|`$/g, '')

describe('the kinds of money movement', () => {
  it('when the database checks a transaction’s type and its entries’ accounts, then it admits exactly the table’s', async () => {
    const database = await createTestDatabase()
    try {
      const [check] = await database.sql<{ definition: string }[]>`
        select pg_get_constraintdef(oid) as definition from pg_constraint
        where conrelid = 'ledger_transactions'::regclass and conname = 'ledger_transactions_type_check'`
      const admitted = [...check!.definition.matchAll(/'(\w+)'::text/g)].map((match) => match[1])
      expect(admitted.sort()).toEqual([...KINDS].sort())
      // ledger_balances (db/functions.sql), which every transaction's CHECK calls, refuses an unknown account.
      const [balances] = await database.sql<{ definition: string }[]>`
        select pg_get_functiondef('ledger_balances'::regproc) as definition`
      const accounts = balances!.definition.match(/not in \(([^)]*)\)/)![1]!
      expect([...accounts.matchAll(/'(\w+)'/g)].map((match) => match[1]).sort()).toEqual(
        Object.keys(LEDGER_ACCOUNTS).sort(),
      )
    } finally {
      await database.drop()
    }
  })

  it('when the API lists the types of balance transaction, then they are the kinds that move a balance', () => {
    // Only an arrival at the bank moves no balance: the API leaves it out.
    expect(KINDS.filter((kind) => !(BALANCE_TRANSACTION_TYPES as readonly string[]).includes(kind))).toEqual([
      'payout_arrival',
    ])
  })

  it('when docs/ledger.md tells what is posted and by whom, then it tells every kind the API shows, posted by its callers', async () => {
    const rows = await tableOf('docs/ledger.md', 'what happened')
    const byType = new Map<string, Set<string>>()
    for (const row of rows) {
      const type = unquoted(row[1]!)
      const files = byType.get(type) ?? new Set()
      for (const file of row[5]!.split(', ')) files.add(file)
      byType.set(type, files)
    }
    expect([...byType.keys()].sort()).toEqual([...BALANCE_TRANSACTION_TYPES].sort())
    for (const [type, files] of byType)
      expect([...files].sort(), type).toEqual([...MOVEMENTS[type as keyof typeof MOVEMENTS].postedBy.callers].sort())
    const accounts = await tableOf('docs/ledger.md', 'ledger account')
    expect(Object.fromEntries(accounts.map(([account, what]) => [unquoted(account!), what]))).toEqual(LEDGER_ACCOUNTS)
  })

  it('when a kind is posted, then by its one posting function, called by its callers and never by a repository', async () => {
    const sources = new Map<string, string>()
    for (const file of await typescriptFiles('src')) sources.set(file, await readFile(file, 'utf8'))
    for (const [kind, { postedBy }] of Object.entries(MOVEMENTS)) {
      expect(typeof (postings as Record<string, unknown>)[postedBy.posting], `${kind}: ${postedBy.posting}`).toBe(
        'function',
      )
      for (const caller of postedBy.callers)
        expect(sources.get(caller), `${caller} calls ${postedBy.posting}`).toContain(`${postedBy.posting}(`)
    }
    // A repository writes rows; the money a write moves is posted by the domain function that makes the write.
    const repositories = [...sources].filter(([file]) => file.endsWith('/repository.ts') && !file.includes('/ledger/'))
    expect(repositories.filter(([, text]) => text.includes('ledger/postings.js')).map(([file]) => file)).toEqual([])
  })

  it('when a kind posts its legs, then they sum to nothing, for any amount and fee', () => {
    for (const [kind, { legs }] of Object.entries(MOVEMENTS))
      for (const [cents, fee] of [
        [10_000, 320],
        [-2_500, 0],
        [1, 1],
      ] as const)
        for (const from of ['payouts_in_transit', 'bank'] as const)
          expect(
            legs({ cents, fee, from }).reduce((sum, [, amount]) => sum + amount, 0),
            `${kind} ${cents} ${fee}`,
          ).toBe(0)
  })
})
