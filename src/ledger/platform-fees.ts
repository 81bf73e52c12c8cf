// The platform's own books (db/migrations/0025_platform_fees.sql): each application fee it collected on an account's
// payment made on the account's connected account (Stripe Connect), and each it gave back with a refund, apart from
// the account's books, where the same fee is a fee part of the charge or the refund (ledger account platform_fees).
// Posted by the ledger's posting of that charge or refund (postings.ts), in its transaction, once per cause; keyed by
// the account it came from, so that the platform's row lives with the account's. Read by `npm run platform:fees`.
import type { Sql, Transaction } from '../db/connect.js'
import { gatheredInsert } from '../db/gathered-inserts.js'
import { newId } from '../db/ids.js'

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
