// The ledger in SQL (db/migrations/0014_ledger.sql): every statement that writes ledger_transactions and
// ledger_entries is here, and the postings (postings.ts) call it. Writers take the caller's transaction, so money
// is posted with the business write that moves it; every statement names the account.
import type { Sql, Transaction } from '../db/connect.js'
import { newId } from '../db/ids.js'
import { pageOf, type Page } from '../db/pagination.js'
import type { Balance, BalanceTransaction, FeeDetail } from '../schemas/balance.js'
import type { PageRequest } from '../schemas/page.js'
import { feeTotal } from './pricing.js'

export type LedgerAccount = 'balance' | 'processor' | 'processor_fees' | 'payouts_in_transit'

export interface Posting {
  accountId: string
  type: BalanceTransaction['type']
  source: string
  /** The cause, once: a posting whose cause is posted already posts nothing. */
  cause: string
  amountCents: number
  fees: FeeDetail[]
  currency: string
  /** Days from now until the net is available; 0 for at once. */
  availableAfterDays: number
  /** Each entry's ledger account and amount; they sum to zero, and the balance's to the net (the database checks). */
  entries: [LedgerAccount, number][]
}

/**
 * Posts a ledger transaction and its entries, in one statement; false when its cause was posted already (the first
 * posting stands, its fee as the pricing was then). A cause posted before with another amount is a contradiction,
 * never skipped: it throws, and the business write goes back with it.
 */
export async function post(tx: Transaction, posting: Posting): Promise<boolean> {
  const fee = feeTotal(posting.fees)
  const rows = await tx`
    with posted as (
      insert into ledger_transactions (account_id, id, type, source, posting, amount_cents, fee_cents, fee_details,
        net_cents, currency, available_on)
      values (${posting.accountId}, ${newId('txn')}, ${posting.type}, ${posting.source}, ${posting.cause},
        ${posting.amountCents}, ${fee}, ${tx.json(posting.fees as never)}, ${posting.amountCents - fee},
        ${posting.currency}, now() + ${posting.availableAfterDays} * interval '1 day')
      on conflict (account_id, posting) do nothing
      returning account_id, id)
    insert into ledger_entries (account_id, transaction_id, entry, ledger_account, amount_cents)
    select posted.account_id, posted.id, entry.n - 1, entry.ledger_account, entry.amount_cents
    from posted, unnest(${posting.entries.map(([account]) => account)}::text[],
                        ${posting.entries.map(([, cents]) => cents)}::bigint[])
                 with ordinality as entry (ledger_account, amount_cents, n)
    returning 1`
  if (rows.length > 0) return true
  const [posted] = await tx<{ amount_cents: string }[]>`
    select amount_cents from ledger_transactions where account_id = ${posting.accountId} and posting = ${posting.cause}`
  if (Number(posted?.amount_cents) !== posting.amountCents)
    throw new Error(`${posting.cause} was posted as ${posted?.amount_cents}, and is now told as ${posting.amountCents}`)
  return false
}

interface LedgerTransactionRow {
  id: string
  type: BalanceTransaction['type']
  source: string
  amount_cents: string
  fee_cents: string
  fee_details: FeeDetail[]
  net_cents: string
  currency: string
  available_on: Date
  payout: string | null
  created_at: Date
}

/** The account's balance at `now`: per currency, its balance entries whose transaction is available, and the rest. */
export async function balanceOf(sql: Sql, accountId: string, now: Date): Promise<Balance> {
  const rows = await sql<{ currency: string; available: string; pending: string }[]>`
    select t.currency,
           coalesce(sum(e.amount_cents) filter (where t.available_on <= ${now}), 0) as available,
           coalesce(sum(e.amount_cents) filter (where t.available_on > ${now}), 0) as pending
    from ledger_entries e
    join ledger_transactions t on t.account_id = e.account_id and t.id = e.transaction_id
    where e.account_id = ${accountId} and t.account_id = ${accountId} and e.ledger_account = 'balance'
    group by t.currency order by t.currency`
  const funds = (pick: (row: (typeof rows)[number]) => string) =>
    rows.map((row) => ({
      amount_cents: Number(pick(row)),
      currency: row.currency as Balance['available'][0]['currency'],
    }))
  return { object: 'balance', available: funds((row) => row.available), pending: funds((row) => row.pending) }
}

export async function findBalanceTransaction(
  sql: Sql,
  accountId: string,
  id: string,
  now: Date,
): Promise<BalanceTransaction | undefined> {
  const [row] = await sql<LedgerTransactionRow[]>`
    select * from ledger_transactions where account_id = ${accountId} and id = ${id}`
  return row && toBalanceTransaction(row, now)
}

export interface BalanceTransactionFilter {
  type?: BalanceTransaction['type'] | undefined
  source?: string | undefined
  payout?: string | undefined
}

/** The account's balance transactions, newest first (src/db/pagination.ts), by type, source or payout. */
export async function listBalanceTransactions(
  sql: Sql,
  accountId: string,
  filter: BalanceTransactionFilter,
  page: PageRequest,
  now: Date,
): Promise<Page<BalanceTransaction> | undefined> {
  const { type = null, source = null, payout = null } = filter
  const scope = sql`account_id = ${accountId} and (${type}::text is null or type = ${type}::text)
    and (${source}::text is null or source = ${source}::text) and (${payout}::text is null or payout = ${payout}::text)`
  const found = await pageOf<LedgerTransactionRow>(sql, 'ledger_transactions', scope, page)
  return found && { rows: found.rows.map((row) => toBalanceTransaction(row, now)), hasMore: found.hasMore }
}

function toBalanceTransaction(row: LedgerTransactionRow, now: Date): BalanceTransaction {
  const currency = row.currency as BalanceTransaction['currency']
  return {
    id: row.id,
    object: 'balance_transaction',
    type: row.type,
    source: row.source,
    amount_cents: Number(row.amount_cents),
    fee_cents: Number(row.fee_cents),
    fee_details: row.fee_details,
    net_cents: Number(row.net_cents),
    currency,
    available_on: row.available_on.toISOString(),
    status: row.available_on <= now ? 'available' : 'pending',
    payout: row.payout,
    created_at: row.created_at.toISOString(),
  }
}
