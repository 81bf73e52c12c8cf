// Payouts and their balances in SQL, and the payout as the API returns it.
import type { Sql, Transaction } from '../db/connect.js'
import { newId } from '../db/ids.js'
import { pageOf, type Page } from '../db/pagination.js'
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
 * Takes the amount from the balance and writes the payout pending, in one statement: the balance's own row is
 * the lock, and its check (never below zero) the rule, so two payouts at once cannot both spend the same money.
 * Undefined when the balance does not hold the amount.
 */
export async function debitAndInsertPending(
  tx: Transaction,
  payout: { accountId: string; amountCents: number; currency: string; description: string | null; operationId: string },
): Promise<PayoutRow | undefined> {
  const [row] = await tx<PayoutRow[]>`
    with debited as (
      update payout_balances set available_cents = available_cents - ${payout.amountCents}
      where account_id = ${payout.accountId} and currency = ${payout.currency} and available_cents >=
        ${payout.amountCents}
      returning account_id
    )
    insert into payouts (id, account_id, amount_cents, currency, description, status, operation_id)
    select ${newId('po')}, account_id, ${payout.amountCents}, ${payout.currency}, ${payout.description}, 'pending',
      ${payout.operationId}
    from debited
    returning *`
  return row
}

export async function findPayoutByOperation(
  db: Sql | Transaction,
  operationId: string,
): Promise<PayoutRow | undefined> {
  const [row] = await db<PayoutRow[]>`select * from payouts where operation_id = ${operationId}`
  return row
}

/** The processor's answer: paid, or failed (and then the amount is back in the balance). */
export async function markPayout(
  tx: Transaction,
  payout: PayoutRow,
  outcome: { paid: boolean; processorReference?: string; failureCode?: string },
): Promise<PayoutRow> {
  const [row] = await tx<PayoutRow[]>`
    update payouts set status = ${outcome.paid ? 'paid' : 'failed'}, processor_reference =
      ${outcome.processorReference ?? null},
                       failure_code = ${outcome.failureCode ?? null}
    where id = ${payout.id} and status = 'pending'
    returning *`
  if (!row) throw new Error(`payout ${payout.id} is no longer pending`)
  if (!outcome.paid) await credit(tx, payout)
  return row
}

/** The processor never saw it: the pending payout is forgotten and its amount given back. */
export async function deletePendingPayout(tx: Transaction, operationId: string): Promise<void> {
  const [deleted] = await tx<
    PayoutRow[]
  >`delete from payouts where operation_id = ${operationId} and status = 'pending' returning *`
  if (deleted) await credit(tx, deleted)
}

async function credit(tx: Transaction, payout: PayoutRow): Promise<void> {
  await tx`update payout_balances set available_cents = available_cents + ${payout.amount_cents} where account_id =
    ${payout.account_id} and currency = ${payout.currency}`
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
