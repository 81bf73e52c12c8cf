// Payouts in SQL: each account's share of one of the processor's payouts, and the payout as the API returns it. Its
// money is the ledger's (the payout's legs, posted by src/processor-events/payouts.ts in the same transaction); this
// row keeps what the API shows of the payout itself: its share, where it is, when it arrives, why it failed.
import type { Sql, Transaction } from '../db/connect.js'
import { pageOf, type Page } from '../db/pagination.js'
import type { PageRequest } from '../schemas/page.js'
import type { Payout, PayoutStatus } from '../schemas/payout.js'

export interface PayoutRow {
  account_id: string
  id: string
  amount_cents: string
  /** One of the account's charges' currencies: the money a payout carries is theirs. */
  currency: Payout['currency']
  status: PayoutStatus
  arrival_date: Date | null
  failure_code: string | null
  created_at: Date
}

/** One account's share of a payout, as the processor tells it now. */
export interface PayoutShare {
  accountId: string
  id: string
  amountCents: number
  currency: string
  status: PayoutStatus
  arrivalDate: Date | undefined
  failureCode: string | undefined
}

/** Where a payout is, once told both: failed outranks paid (a paid payout can come back), paid outranks in transit. */
const RANK: Record<PayoutStatus, number> = { in_transit: 0, paid: 1, failed: 2 }
export const laterStatus = (a: PayoutStatus, b: PayoutStatus): PayoutStatus => (RANK[a] >= RANK[b] ? a : b)

/** The share as the books hold it, locked (the caller holds the payout's lock: this only orders the update). */
export async function lockPayoutShare(tx: Transaction, accountId: string, id: string): Promise<PayoutRow | undefined> {
  const [row] = await tx<PayoutRow[]>`
    select * from payouts where account_id = ${accountId} and id = ${id} for update`
  return row
}

/** Writes the share, or moves it forward: to the status the caller ranked (laterStatus); a date or code once told. */
export async function savePayoutShare(tx: Transaction, share: PayoutShare): Promise<PayoutRow> {
  const [row] = await tx<PayoutRow[]>`
    insert into payouts (account_id, id, amount_cents, currency, status, arrival_date, failure_code)
    values (${share.accountId}, ${share.id}, ${share.amountCents}, ${share.currency}, ${share.status},
      ${share.arrivalDate ?? null}, ${share.failureCode ?? null})
    on conflict (account_id, id) do update set
      status = excluded.status,
      arrival_date = coalesce(excluded.arrival_date, payouts.arrival_date),
      failure_code = coalesce(payouts.failure_code, excluded.failure_code),
      updated_at = now()
    returning *`
  return row as PayoutRow
}

export async function findPayout(sql: Sql, accountId: string, id: string): Promise<Payout | undefined> {
  const [row] = await sql<PayoutRow[]>`select * from payouts where account_id = ${accountId} and id = ${id}`
  return row && toPayout(sql, row)
}

/** The payout as the API shows it (in an event, as in GET /v1/payouts/{id}). */
export async function toPayout(db: Sql | Transaction, row: PayoutRow): Promise<Payout> {
  return (await withTransactions(db, row.account_id, [row]))[0] as Payout
}

/** The account's payouts, newest first (src/db/pagination.ts), in one status or all. */
export async function listPayouts(
  sql: Sql,
  accountId: string,
  status: PayoutStatus | undefined,
  page: PageRequest,
): Promise<Page<Payout> | undefined> {
  const scope = sql`account_id = ${accountId} and (${status ?? null}::text is null or status = ${status ?? null}::text)`
  const found = await pageOf<PayoutRow>(sql, 'payouts', scope, page)
  return found && { rows: await withTransactions(sql, accountId, found.rows), hasMore: found.hasMore }
}

/** The payouts as the API shows them, with the balance transactions of their legs (one statement for a page). */
async function withTransactions(db: Sql | Transaction, accountId: string, rows: PayoutRow[]): Promise<Payout[]> {
  const legs = await db<{ source: string; type: 'payout' | 'payout_failure'; id: string }[]>`
    select source, type, id from ledger_transactions
    where account_id = ${accountId} and type in ('payout', 'payout_failure')
      and source = any(${rows.map((row) => row.id)}::text[])`
  const leg = (row: PayoutRow, type: string) =>
    legs.find((each) => each.source === row.id && each.type === type)?.id ?? null
  return rows.map((row) => ({
    id: row.id,
    object: 'payout',
    amount_cents: Number(row.amount_cents),
    currency: row.currency,
    status: row.status,
    arrival_date: row.arrival_date?.toISOString() ?? null,
    failure_code: row.failure_code,
    balance_transaction: leg(row, 'payout'),
    failure_balance_transaction: leg(row, 'payout_failure'),
    created_at: row.created_at.toISOString(),
  }))
}
