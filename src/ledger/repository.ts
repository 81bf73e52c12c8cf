// The ledger in SQL (db/migrations/0014_ledger.sql): every statement that writes ledger_transactions (and so their
// entries, which are in their rows) is here, and the postings (postings.ts) call it. Writers take the caller's
// transaction, so money is posted with the business write that moves it; every statement names the account.
import type { Sql, Transaction } from '../db/connect.js'
import { gatheredInsert } from '../db/gathered-inserts.js'
import { newId } from '../db/ids.js'
import { pageOf, type Page } from '../db/pagination.js'
import type { Balance, BalanceTransaction, FeeDetail } from '../schemas/balance.js'
import type { CarriedTransaction } from '../processor/later-outcomes.js'
import type { PageRequest } from '../schemas/page.js'
import { feeTotal } from '../processor/pricing.js'

import type { LedgerAccount, LedgerTransactionType } from './movements.js'

export type { LedgerAccount, LedgerTransactionType }

export interface Posting {
  accountId: string
  type: LedgerTransactionType
  source: string
  /** The cause, once: a posting whose cause is posted already posts nothing. */
  cause: string
  amountCents: number
  fees: FeeDetail[]
  currency: string
  /** Days from when the money moved until the net is available; 0 for at once. */
  availableAfterDays: number
  /** When the net is available, if the processor said so (its balance transaction): instead of the days above. */
  availableOn?: Date | undefined
  /** When the money moved: now, unless it is posted afterwards (books brought in from elsewhere). */
  movedAt?: Date | undefined
  /** Each entry's ledger account and amount; they sum to zero, and the balance's to the net (the database checks). */
  entries: [LedgerAccount, number][]
}

/**
 * Posts a ledger transaction with its entries, in one row, once per cause: a posting whose cause is posted already
 * posts nothing (the first stands, its fee as the pricing was then). A cause posted before with another amount is a
 * contradiction, never skipped: it throws (LG003, ledger_posted_otherwise), and the business write goes back with it.
 * Completed together with other requests, it goes out with their postings, in one statement
 * (src/db/gathered-inserts.ts).
 */
export const post: (tx: Transaction, posting: Posting) => Promise<void> = gatheredInsert<Posting>(postAll)

function postAll(sql: Sql | Transaction, told: Posting[]) {
  const postings = onceEach(told)
  const column = <T>(value: (posting: Posting) => T) => postings.map(value)
  return sql`
    insert into ledger_transactions (account_id, id, type, source, posting, amount_cents, fee_cents, fee_details,
      net_cents, currency, available_on, entry_accounts, entry_cents)
    select account_id, id, type, source, posting, amount_cents, fee_cents, fee_details::jsonb, amount_cents - fee_cents,
      currency, coalesce(available_on, coalesce(moved_at, now()) + available_after_days * interval '1 day'),
      entry_accounts::text[], entry_cents::bigint[]
    from unnest(${column((p) => p.accountId)}::text[], ${column(() => newId('txn'))}::text[],
      ${column((p) => p.type)}::text[], ${column((p) => p.source)}::text[], ${column((p) => p.cause)}::text[],
      ${column((p) => p.amountCents)}::bigint[], ${column((p) => feeTotal(p.fees))}::bigint[],
      ${column((p) => JSON.stringify(p.fees))}::text[], ${column((p) => p.currency)}::text[],
      ${column((p) => p.availableOn ?? null)}::timestamptz[], ${column((p) => p.movedAt ?? null)}::timestamptz[],
      ${column((p) => p.availableAfterDays)}::int[],
      ${column((p) => `{${p.entries.map(([account]) => account).join(',')}}`)}::text[],
      ${column((p) => `{${p.entries.map(([, cents]) => cents).join(',')}}`)}::text[])
      as p(account_id, id, type, source, posting, amount_cents, fee_cents, fee_details, currency, available_on,
        moved_at, available_after_days, entry_accounts, entry_cents)
    on conflict (account_id, posting) do update
      set posting = ledger_posted_otherwise(ledger_transactions.posting, ledger_transactions.amount_cents,
        excluded.amount_cents)
      where ledger_transactions.amount_cents <> excluded.amount_cents`
}

/**
 * The postings of one statement, each cause once: a cause told twice in it is posted once, and told with two amounts
 * it is a contradiction. (An insert's ON CONFLICT may not meet a row the same statement inserted.)
 */
function onceEach(postings: Posting[]): Posting[] {
  const first = new Map<string, Posting>()
  for (const posting of postings) {
    const key = `${posting.accountId} ${posting.cause}`
    const before = first.get(key)
    if (!before) first.set(key, posting)
    else if (before.amountCents !== posting.amountCents)
      throw new Error(`${posting.cause} was posted as ${before.amountCents}, and is now told as ${posting.amountCents}`)
  }
  return [...first.values()]
}

/**
 * Sets the payout that carried these ledger transactions, and on the payout's own leg and arrival (as Stripe lists a
 * payout's balance transaction with what it carries): the one change the ledger takes, once each. Its failure's leg
 * is not its own: the money it returns is carried by a later payout.
 */
export async function markPaidOut(tx: Transaction, accountId: string, ids: string[], payout: string): Promise<void> {
  await tx`
    update ledger_transactions set payout = ${payout}
    where account_id = ${accountId} and payout is null
      and (id = any(${ids}::text[]) or (source = ${payout} and type in ('payout', 'payout_arrival')))`
}

/** The causes posted for one source of the account (a payout's `payout:po_…`, `payout_arrival:po_…` …). */
export async function postedFor(tx: Transaction, accountId: string, source: string): Promise<Set<string>> {
  const rows = await tx<{ posting: string }[]>`
    select posting from ledger_transactions where source = ${source} and account_id = ${accountId}`
  return new Set(rows.map((row) => row.posting))
}

/** A ledger transaction that a carried one is, in the books. */
export interface PostedInBooks {
  accountId: string
  id: string
  amountCents: number
  feeCents: number
  netCents: number
}

/** A transaction the processor carried in a payout, as the books hold it (src/processor-events/payouts.ts). */
export interface CarriedInBooks {
  /** What the books posted for it: one ledger transaction, or for a failed payout's return each account's leg. */
  posted: PostedInBooks[]
  /** The books hold a leg of it still to come: a failed payout whose failure they have not been told yet. */
  awaited: boolean
}

/**
 * Finds each carried transaction in the books, in the order given: a charge's, refund's or dispute's by the charge
 * it is about (a refund by the processor's reference among the charge's refunds); a failed payout's return by its
 * payout, as the payout_failure legs of every account it carried money of.
 */
export async function findCarried(
  tx: Sql | Transaction,
  carried: Pick<CarriedTransaction, 'type' | 'chargeId' | 'objectReference'>[],
): Promise<CarriedInBooks[]> {
  const rows = await tx<
    {
      n: string
      account_id: string
      id: string | null
      type: string | null
      amount_cents: string
      fee_cents: string
      net_cents: string
    }[]
  >`
    with carried as (
      select * from unnest(${carried.map((each) => each.type)}::text[],
                           ${carried.map((each) => each.chargeId ?? null)}::text[],
                           ${carried.map((each) => each.objectReference ?? null)}::text[])
        with ordinality as c (type, charge_id, object_reference, n))
    select c.n, t.account_id, t.id, t.type, t.amount_cents, t.fee_cents, t.net_cents
    from carried c
    join charges ch on ch.id = c.charge_id
    left join refunds r on c.type in ('refund', 'refund_failure') and r.charge_id = c.charge_id
      and r.account_id = ch.account_id and r.processor_reference = c.object_reference
    join ledger_transactions t on t.account_id = ch.account_id and t.posting = c.type || ':' ||
      case when c.type = 'charge' then c.charge_id when c.type in ('refund', 'refund_failure') then r.id
           else c.object_reference end
    where c.type <> 'payout_failure'
    union all
    select c.n, t.account_id, t.id, t.type, t.amount_cents, t.fee_cents, t.net_cents
    from carried c
    join ledger_transactions t on t.source = c.object_reference and t.type in ('payout', 'payout_failure')
    where c.type = 'payout_failure'`
  const found: CarriedInBooks[] = carried.map(() => ({ posted: [], awaited: false }))
  const legs = new Map<number, { paidOut: Set<string>; failed: Set<string> }>()
  for (const row of rows) {
    const n = Number(row.n) - 1
    const posted = {
      accountId: row.account_id,
      id: row.id ?? '',
      amountCents: Number(row.amount_cents),
      feeCents: Number(row.fee_cents),
      netCents: Number(row.net_cents),
    }
    if (carried[n]?.type !== 'payout_failure') {
      found[n]?.posted.push(posted)
      continue
    }
    const leg = legs.get(n) ?? { paidOut: new Set(), failed: new Set() }
    legs.set(n, leg)
    if (row.type === 'payout') leg.paidOut.add(row.account_id)
    else {
      leg.failed.add(row.account_id)
      found[n]?.posted.push(posted)
    }
  }
  for (const [n, leg] of legs) {
    const entry = found[n]
    if (entry) entry.awaited = [...leg.paidOut].some((account) => !leg.failed.has(account))
  }
  return found
}

/** What each payout carried, summed by type from the books (every account's), for the payout report. */
export async function carriedByPayout(
  sql: Sql,
  payouts: string[],
): Promise<{ payout: string; type: LedgerTransactionType; amountCents: number; feeCents: number; netCents: number }[]> {
  const rows = await sql<{ payout: string; type: LedgerTransactionType; amount: string; fee: string; net: string }[]>`
    select payout, type, sum(amount_cents) as amount, sum(fee_cents) as fee, sum(net_cents) as net
    from ledger_transactions where payout = any(${payouts}::text[]) group by payout, type order by payout, type`
  return rows.map((row) => ({
    payout: row.payout,
    type: row.type,
    amountCents: Number(row.amount),
    feeCents: Number(row.fee),
    netCents: Number(row.net),
  }))
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
  /** Whether it counts as available at the time asked (AVAILABLE, in the query that read it). */
  available: boolean
  payout: string | null
  created_at: Date
}

/** A ledger transaction's columns, and whether it counts as available at `now`. */
const withAvailability = (sql: Sql, now: Date) => sql`*, ${AVAILABLE(sql, now)} as available`

/**
 * Holds the account's balance in one currency until the transaction ends: what spends it (reserveFromBalance) takes
 * this first, so two at once cannot both read the same available money. An advisory lock, as a balance has no row
 * of its own to lock; its key names the account, so it stays on the account's node once the data is distributed.
 */
export async function lockBalance(tx: Transaction, accountId: string, currency: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtextextended(${`ledger balance ${accountId} ${currency}`}, 0))`
}

/**
 * What the account may spend of one currency at `now`: what came in and is available by then, less everything that
 * went out, whenever. Money out counts at once whatever its `available_on` says: a payout posted a moment after
 * `now` was read (its transaction waited on the balance's lock) has spent it all the same.
 */
export async function availableOf(tx: Transaction, accountId: string, currency: string, now: Date): Promise<number> {
  const parts = await balanceParts(tx, accountId, now, currency)
  return parts.reduce((sum, part) => sum + part.available, 0)
}

/**
 * The account's balance at `now` in parts (currency, available, pending), of one currency or all: the sums kept of
 * what settled before their `through` (settled-balances.ts), all available by then, and the ledger transactions
 * settled since, each available or pending at `now`. Two statements, so that the second ranges over what settled
 * since `through` with its value in hand: a plan made not knowing it scans the account's every posting. They need
 * not share a snapshot: what is kept stays right however much is posted after it, as the ledger is append-only. A
 * sum kept from after `now` (a clock read before, or a test's) is left out, and the ledger summed in full. A
 * transaction's balance entries sum to its net (the database checks it), so a balance is the sum of nets.
 */
async function balanceParts(db: Sql | Transaction, accountId: string, now: Date, currency: string | null = null) {
  const kept = await db<{ currency: string; through: Date; net_cents: string }[]>`
    select currency, through, net_cents from ledger_settled_balances
    where account_id = ${accountId} and through <= ${now}`
  const through = kept[0]?.through ?? null
  const live = await db<{ currency: string; available: string; pending: string }[]>`
    select currency, coalesce(sum(net_cents) filter (where ${AVAILABLE(db, now)}), 0) as available,
           coalesce(sum(net_cents) filter (where not ${AVAILABLE(db, now)}), 0) as pending
    from ledger_transactions
    where account_id = ${accountId} and (${currency}::text is null or currency = ${currency}::text)
      and ledger_settles_at(net_cents, created_at, available_on) >= coalesce(${through}::timestamptz, '-infinity')
    group by currency`
  const parts = new Map<string, { currency: string; available: number; pending: number }>()
  const add = (of: string, available: string, pending: string) => {
    const part = parts.get(of) ?? { currency: of, available: 0, pending: 0 }
    part.available += Number(available)
    part.pending += Number(pending)
    parts.set(of, part)
  }
  for (const row of kept) if (currency === null || row.currency === currency) add(row.currency, row.net_cents, '0')
  for (const row of live) add(row.currency, row.available, row.pending)
  return [...parts.values()].sort((one, other) => one.currency.localeCompare(other.currency))
}

/** Which ledger transactions count as available at `now` (the rest are pending): see availableOf. */
const AVAILABLE = (db: Sql | Transaction, now: Date) => db`(available_on <= ${now} or net_cents < 0)`

/** The account's balance at `now`: per currency, what is available and what is pending (balanceParts). */
export async function balanceOf(sql: Sql, accountId: string, now: Date): Promise<Balance> {
  const parts = await balanceParts(sql, accountId, now)
  const funds = (pick: (part: (typeof parts)[number]) => number) =>
    parts.map((part) => ({ amount_cents: pick(part), currency: part.currency as Balance['available'][0]['currency'] }))
  return { object: 'balance', available: funds((part) => part.available), pending: funds((part) => part.pending) }
}

export async function findBalanceTransaction(
  sql: Sql,
  accountId: string,
  id: string,
  now: Date,
): Promise<BalanceTransaction | undefined> {
  const [row] = await sql<LedgerTransactionRow[]>`
    select ${withAvailability(sql, now)} from ledger_transactions
    where account_id = ${accountId} and id = ${id} and type <> 'payout_arrival'`
  return row && toBalanceTransaction(row)
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
  const scope = sql`account_id = ${accountId} and type <> 'payout_arrival'
    and (${type}::text is null or type = ${type}::text)
    and (${source}::text is null or source = ${source}::text) and (${payout}::text is null or payout = ${payout}::text)`
  const found = await pageOf<LedgerTransactionRow>(sql, 'ledger_transactions', scope, page, withAvailability(sql, now))
  return found && { rows: found.rows.map(toBalanceTransaction), hasMore: found.hasMore }
}

function toBalanceTransaction(row: LedgerTransactionRow): BalanceTransaction {
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
    status: row.available ? 'available' : 'pending',
    payout: row.payout,
    created_at: row.created_at.toISOString(),
  }
}
