// npm run bench:balance [-- --postings=1000000] [-- --rounds=5]: what reading an account's balance costs with sums
// kept (src/ledger/settled-balances.ts), side by side with the ledger summed in full as it was before
// db/migrations/0017, on an account with `postings` ledger transactions (a year of charges, a refund in twenty,
// money available two days after it moved) beside one with 100. Also what a roll of both accounts costs, the first
// and the next. Figures: milliseconds per read (median of `rounds`, read in turn), and their ratio.
import { parseArgs } from 'node:util'
import pino from 'pino'
import type { Sql } from '../../src/db/connect.js'
import { rollBalances } from '../../src/ledger/settled-balances.js'
import { balanceOf } from '../../src/ledger/repository.js'
import { createAccount } from '../../src/accounts/api-keys.js'
import { startBenchCluster } from './cluster.js'
import { median, spread } from './report.js'

const { values: args } = parseArgs({
  options: { postings: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '5' } },
})
const postings = Number(args.postings)
const rounds = Number(args.rounds)

/** The balance as it was read before 0017: every ledger transaction of the account, summed. */
const summedInFull = (sql: Sql, accountId: string, now: Date) => sql`
  select currency,
         coalesce(sum(net_cents) filter (where available_on <= ${now} or net_cents < 0), 0) as available,
         coalesce(sum(net_cents) filter (where not (available_on <= ${now} or net_cents < 0)), 0) as pending
  from ledger_transactions where account_id = ${accountId} group by currency order by currency`

/** `count` ledger transactions of the account over the year before now: charges, and every twentieth a refund. */
async function fill(sql: Sql, accountId: string, count: number): Promise<void> {
  for (let from = 0; from < count; from += 100_000) {
    const to = Math.min(count, from + 100_000)
    await sql`
      insert into ledger_transactions (account_id, id, type, source, posting, amount_cents, fee_cents, net_cents,
        currency, available_on, created_at, entry_accounts, entry_cents)
      select ${accountId}, 'txn_' || lpad(to_hex(n), 24, '0'), kind, 'ch_bench', kind || ':' || n, cents, 0, cents,
             'usd', moved + interval '2 days', moved, '{balance,processor}', array[cents, -cents]
      from generate_series(${from + 1}::int, ${to}::int) n,
           lateral (select case when n % 20 = 0 then 'refund' else 'charge' end as kind,
                           case when n % 20 = 0 then -500 else 1000 + n % 500 end::bigint as cents,
                           now() - interval '365 days' * (1 - n::float8 / ${count}) as moved) p`
    process.stderr.write(`  balance bench: ${to} of ${count} postings\r`)
  }
  process.stderr.write('\n')
}

async function timed(read: () => Promise<unknown>): Promise<number> {
  const started = performance.now()
  await read()
  return performance.now() - started
}

const cluster = await startBenchCluster()
try {
  const { sql } = await cluster.database('bench_balance')
  const large = (await createAccount(sql, 'Large')).account_id
  const small = (await createAccount(sql, 'Small')).account_id
  await fill(sql, large, postings)
  await fill(sql, small, 100)
  await sql`vacuum analyze ledger_transactions`
  const now = new Date()
  const before = await balanceOf(sql, large, now)
  const settings = { marginSeconds: 10, waitMs: 30_000, batchSize: 500, maxMs: 600_000, warnBehindSeconds: 600 }
  const firstRoll = await timed(() => rollBalances(sql, settings, pino({ level: 'silent' })))
  const nextRoll = await timed(() => rollBalances(sql, settings, pino({ level: 'silent' })))
  const after = await balanceOf(sql, large, now)
  if (JSON.stringify(after) !== JSON.stringify(before))
    throw new Error(`the balance kept ${JSON.stringify(after)} is not the balance summed ${JSON.stringify(before)}`)

  const reads = {
    fullLarge: [] as number[],
    keptLarge: [] as number[],
    fullSmall: [] as number[],
    keptSmall: [] as number[],
  }
  for (let round = 0; round < rounds; round++) {
    reads.fullLarge.push(await timed(() => summedInFull(sql, large, now)))
    reads.keptLarge.push(await timed(() => balanceOf(sql, large, now)))
    reads.fullSmall.push(await timed(() => summedInFull(sql, small, now)))
    reads.keptSmall.push(await timed(() => balanceOf(sql, small, now)))
  }
  const line = (label: string, samples: number[]) =>
    `  ${label.padEnd(52)} ${median(samples).toFixed(2).padStart(9)} ms`
  const ratio = (a: number[], b: number[]) => spread(a.map((sample, index) => sample / (b[index] ?? Number.NaN)))
  console.log(
    [
      `A balance read (${rounds} rounds, median; docs/measure.md):`,
      line(`${postings.toLocaleString('en')} postings, summed in full (before 0017)`, reads.fullLarge),
      line(`${postings.toLocaleString('en')} postings, kept and the rest summed`, reads.keptLarge),
      line('100 postings, summed in full', reads.fullSmall),
      line('100 postings, kept and the rest summed', reads.keptSmall),
      `  kept / in full: ${ratio(reads.keptLarge, reads.fullLarge)} (large), ` +
        `${ratio(reads.keptSmall, reads.fullSmall)} (small)`,
      `The roll of both accounts: the first ${firstRoll.toFixed(0)} ms, the next ${nextRoll.toFixed(0)} ms.`,
    ].join('\n'),
  )
} finally {
  await cluster.stop()
}
