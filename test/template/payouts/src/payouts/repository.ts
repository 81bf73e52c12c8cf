// Payouts in SQL, and the payout as the API returns it. Their money is the ledger's: each payout's reservation,
// arrival or return is posted (src/ledger/postings.ts) in the transaction that writes the payout.
import type { Sql, Transaction } from '../db/connect.js'
import { newId } from '../db/ids.js'
import { pageOf, type Page } from '../db/pagination.js'
import { postPayoutArrival, postPayoutFailure, reserveFromBalance } from '../ledger/postings.js'
import { markPaidOut } from '../ledger/repository.js'
import type { PageRequest } from '../schemas/page.js'
import type { Payout } from '../schemas/payout.js'

export interface PayoutRow {
  id: string
  account_id: string
  amount_cents: number
  currency: string
  description: string | null
  status: Payout['status']
  failure_code: string | null
  operation_id: string
  processor_reference: string | null
  created_at: Date
}

/**
 * Writes the payout pending and takes its amount from the account's balance (a `payout` posting of the ledger), in
 * the caller's transaction, if what is available at `now` holds it; undefined if not. The balance's lock, taken
 * first, makes two payouts at once wait for each other, so they cannot both spend the same money.
 */
export async function reserveAndInsertPending(
  tx: Transaction,
  payout: { accountId: string; amountCents: number; currency: string; description: string | null; operationId: string },
  now: Date,
): Promise<PayoutRow | undefined> {
  const id = newId('po')
  const money = { account_id: payout.accountId, currency: payout.currency }
  if (!(await reserveFromBalance(tx, money, id, payout.amountCents, now))) return undefined
  const [row] = await tx<PayoutRow[]>`
    insert into payouts (id, account_id, amount_cents, currency, description, status, operation_id)
    values (${id}, ${payout.accountId}, ${payout.amountCents}, ${payout.currency}, ${payout.description}, 'pending',
      ${payout.operationId})
    returning *`
  return row
}

export async function findPayoutByOperation(
  db: Sql | Transaction,
  accountId: string,
  operationId: string,
): Promise<PayoutRow | undefined> {
  const [row] = await db<PayoutRow[]>`
    select * from payouts where account_id = ${accountId} and operation_id = ${operationId}`
  return row
}

/** The processor's answer: paid (the money left for the bank), or failed (and its amount is back in the balance). */
export async function markPayout(
  tx: Transaction,
  payout: PayoutRow,
  outcome: { paid: boolean; processorReference?: string; failureCode?: string },
): Promise<PayoutRow> {
  const [row] = await tx<PayoutRow[]>`
    update payouts set status = ${outcome.paid ? 'paid' : 'failed'}, processor_reference =
      ${outcome.processorReference ?? null}, failure_code = ${outcome.failureCode ?? null}
    where account_id = ${payout.account_id} and id = ${payout.id} and status = 'pending'
    returning *`
  if (!row) throw new Error(`payout ${payout.id} is no longer pending`)
  const money = { account_id: payout.account_id, currency: payout.currency }
  if (outcome.paid) {
    await postPayoutArrival(tx, money, payout.id, payout.amount_cents)
    await markPaidOut(tx, payout.account_id, [], payout.id)
  } else await postPayoutFailure(tx, money, payout.id, payout.amount_cents, 'payouts_in_transit')
  return row
}

/**
 * The processor never saw it: the pending payout is canceled and its amount given back. Canceled, not deleted: the
 * ledger, append-only, keeps its reservation and the return, and they name it.
 */
export async function cancelPendingPayout(tx: Transaction, accountId: string, operationId: string): Promise<void> {
  const [canceled] = await tx<PayoutRow[]>`
    update payouts set status = 'canceled'
    where account_id = ${accountId} and operation_id = ${operationId} and status = 'pending'
    returning *`
  if (canceled) {
    const money = { account_id: accountId, currency: canceled.currency }
    await postPayoutFailure(tx, money, canceled.id, canceled.amount_cents, 'payouts_in_transit')
  }
}

export async function findPayout(sql: Sql, accountId: string, id: string): Promise<Payout | undefined> {
  const [row] = await sql<PayoutRow[]>`select * from payouts where id = ${id} and account_id = ${accountId}`
  return row && toPayout(row)
}

export async function listPayouts(sql: Sql, accountId: string, page: PageRequest): Promise<Page<Payout> | undefined> {
  const found = await pageOf<PayoutRow>(sql, 'payouts', sql`account_id = ${accountId}`, page)
  return found && { rows: found.rows.map(toPayout), hasMore: found.hasMore }
}

export function toPayout(row: PayoutRow): Payout {
  return {
    id: row.id,
    object: 'payout',
    amount_cents: row.amount_cents,
    currency: row.currency as Payout['currency'],
    description: row.description,
    status: row.status,
    failure_code: row.failure_code,
    processor_reference: row.processor_reference,
    created_at: row.created_at.toISOString(),
  }
}
