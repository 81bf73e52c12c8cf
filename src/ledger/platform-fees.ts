// The platform's own books (db/migrations/0025_platform_fees.sql): each application fee it collected on an account's
// payment made on the account's connected account (Stripe Connect), and each it gave back with a refund, apart from
// the account's books, where the same fee is a fee part of the charge or the refund (ledger account platform_fees).
// Posted by the ledger's posting of that charge or refund (postings.ts), in its transaction, once per cause; keyed by
// the account it came from, so that the platform's row lives with the account's. Read by `npm run platform:fees`,
// which also holds them against the processor's own list of fees (comparePlatformFees).
import type { Sql, Transaction } from '../db/connect.js'
import { gatheredInsert } from '../db/gathered-inserts.js'
import { newId } from '../db/ids.js'
import type { PlatformFeesAt } from '../processor/later-outcomes.js'

export interface PlatformFee {
  account_id: string
  currency: string
  /** The charge or refund whose posting carried it. */
  source: string
  /** That posting's cause: a fee is posted once per cause. */
  cause: string
  /** Collected: positive; given back: negative. */
  amountCents: number
}

/** Posts the platform's fee of a posting: gathered with the postings of the requests completing together. */
export const postPlatformFee: (tx: Transaction, fee: PlatformFee) => Promise<void> = gatheredInsert<PlatformFee>(
  (sql, fees) => sql`
    insert into platform_fees (account_id, id, type, source, posting, amount_cents, currency)
    select account_id, id, case when amount_cents > 0 then 'application_fee' else 'application_fee_refund' end,
      source, posting, amount_cents, currency
    from unnest(${fees.map((fee) => fee.account_id)}::text[], ${fees.map(() => newId('pfee'))}::text[],
      ${fees.map((fee) => fee.source)}::text[], ${fees.map((fee) => fee.cause)}::text[],
      ${fees.map((fee) => fee.amountCents)}::bigint[], ${fees.map((fee) => fee.currency)}::text[])
      as f(account_id, id, source, posting, amount_cents, currency)
    on conflict (account_id, posting) do nothing`,
)

export interface PlatformFeeTotals {
  account_id: string
  currency: string
  /** What the platform collected, what it gave back, and what it kept (the difference). */
  collected_cents: number
  refunded_cents: number
  net_cents: number
  fees: number
}

/** The platform's fees by account and currency, collected since `since` (all when unset). */
export async function platformFeeTotals(sql: Sql, since?: Date): Promise<PlatformFeeTotals[]> {
  const rows = await sql<(Omit<PlatformFeeTotals, 'fees'> & { fees: string })[]>`
    select account_id, currency,
      coalesce(sum(amount_cents) filter (where amount_cents > 0), 0)::bigint as collected_cents,
      coalesce(-sum(amount_cents) filter (where amount_cents < 0), 0)::bigint as refunded_cents,
      sum(amount_cents)::bigint as net_cents, count(*) filter (where amount_cents > 0) as fees
    from platform_fees
    where created_at >= ${since ?? new Date(0)}
    group by account_id, currency
    order by account_id, currency`
  return rows.map((row) => ({
    account_id: row.account_id,
    currency: row.currency,
    collected_cents: Number(row.collected_cents),
    refunded_cents: Number(row.refunded_cents),
    net_cents: Number(row.net_cents),
    fees: Number(row.fees),
  }))
}

/** One processor account's fees in one currency, in the platform's books and at the processor. */
export interface PlatformFeeComparison {
  processor_account: string
  /** The account whose charges made them (its rows), or null when the books have none. */
  account_id: string | null
  currency: string
  books: { collected_cents: number; refunded_cents: number }
  processor: { collected_cents: number; refunded_cents: number }
  /** What the processor kept less what the books kept. */
  difference_cents: number
  /** Both what was collected and what was given back are the same on both sides. */
  agrees: boolean
}

/**
 * The platform's books held against the processor's fees, by the processor account each fee's payment was made on
 * (the charge's, whatever the account is linked to now) and currency, to the cent; every pair either side knows.
 */
export async function comparePlatformFees(sql: Sql, atProcessor: PlatformFeesAt[]): Promise<PlatformFeeComparison[]> {
  const books = await sql<
    { processor_account: string; account_id: string; currency: string; collected: string; refunded: string }[]
  >`
    select coalesce(c.processor_account, rc.processor_account) as processor_account, f.account_id, f.currency,
      coalesce(sum(f.amount_cents) filter (where f.amount_cents > 0), 0)::bigint as collected,
      coalesce(-sum(f.amount_cents) filter (where f.amount_cents < 0), 0)::bigint as refunded
    from platform_fees f
    left join charges c on f.type = 'application_fee' and c.account_id = f.account_id and c.id = f.source
    left join refunds r on f.type = 'application_fee_refund' and r.account_id = f.account_id and r.id = f.source
    left join charges rc on rc.account_id = r.account_id and rc.id = r.charge_id
    group by 1, 2, 3`
  const lines = new Map<string, PlatformFeeComparison>()
  const lineOf = (processorAccount: string, currency: string) => {
    const key = `${processorAccount} ${currency}`
    const line = lines.get(key) ?? {
      processor_account: processorAccount,
      account_id: null,
      currency,
      books: { collected_cents: 0, refunded_cents: 0 },
      processor: { collected_cents: 0, refunded_cents: 0 },
      difference_cents: 0,
      agrees: true,
    }
    lines.set(key, line)
    return line
  }
  for (const row of books) {
    const line = lineOf(row.processor_account, row.currency)
    line.account_id = row.account_id
    line.books.collected_cents += Number(row.collected)
    line.books.refunded_cents += Number(row.refunded)
  }
  for (const fees of atProcessor) {
    const line = lineOf(fees.processorAccount, fees.currency)
    line.processor.collected_cents += fees.collectedCents
    line.processor.refunded_cents += fees.refundedCents
  }
  for (const line of lines.values()) {
    const kept = (side: { collected_cents: number; refunded_cents: number }) =>
      side.collected_cents - side.refunded_cents
    line.difference_cents = kept(line.processor) - kept(line.books)
    line.agrees =
      line.processor.collected_cents === line.books.collected_cents &&
      line.processor.refunded_cents === line.books.refunded_cents
  }
  return [...lines.values()].sort(
    (a, b) => a.processor_account.localeCompare(b.processor_account) || a.currency.localeCompare(b.currency),
  )
}
