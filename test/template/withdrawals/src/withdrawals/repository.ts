// Withdrawals in SQL, and the withdrawal as the API returns it. Their money is the ledger's: each withdrawal's
// reservation, arrival or return is posted (src/ledger/postings.ts) in the transaction that writes the withdrawal.
import type { Sql, Transaction } from '../db/connect.js'
import { newId } from '../db/ids.js'
import { pageOf, type Page } from '../db/pagination.js'
import { postPayoutArrival, postPayoutFailure, reserveFromBalance } from '../ledger/postings.js'
import { markPaidOut } from '../ledger/repository.js'
import type { PageRequest } from '../schemas/page.js'
import type { Withdrawal } from '../schemas/withdrawal.js'

export interface WithdrawalRow {
  id: string
  account_id: string
  amount_cents: number
  currency: string
  description: string | null
  status: Withdrawal['status']
  failure_code: string | null
  operation_id: string
  processor_reference: string | null
  created_at: Date
}

/**
 * Writes the withdrawal pending and takes its amount from the account's balance (a `payout` posting of the ledger), in
 * the caller's transaction, if what is available at `now` holds it; undefined if not. The balance's lock, taken
 * first, makes two withdrawals at once wait for each other, so they cannot both spend the same money.
 */
export async function reserveAndInsertPending(
  tx: Transaction,
  withdrawal: {
    accountId: string
    amountCents: number
    currency: string
    description: string | null
    operationId: string
  },
  now: Date,
): Promise<WithdrawalRow | undefined> {
  const id = newId('wdr')
  const money = { account_id: withdrawal.accountId, currency: withdrawal.currency }
  if (!(await reserveFromBalance(tx, money, id, withdrawal.amountCents, now))) return undefined
  const [row] = await tx<WithdrawalRow[]>`
    insert into withdrawals (id, account_id, amount_cents, currency, description, status, operation_id)
    values (${id}, ${withdrawal.accountId}, ${withdrawal.amountCents}, ${withdrawal.currency},
      ${withdrawal.description}, 'pending', ${withdrawal.operationId})
    returning *`
  return row
}

export async function findWithdrawalByOperation(
  db: Sql | Transaction,
  accountId: string,
  operationId: string,
): Promise<WithdrawalRow | undefined> {
  const [row] = await db<WithdrawalRow[]>`
    select * from withdrawals where account_id = ${accountId} and operation_id = ${operationId}`
  return row
}

/** The processor's answer: paid (the money left for the bank), or failed (and its amount is back in the balance). */
export async function markWithdrawal(
  tx: Transaction,
  withdrawal: WithdrawalRow,
  outcome: { paid: boolean; processorReference?: string; failureCode?: string },
): Promise<WithdrawalRow> {
  const [row] = await tx<WithdrawalRow[]>`
    update withdrawals set status = ${outcome.paid ? 'paid' : 'failed'}, processor_reference =
      ${outcome.processorReference ?? null}, failure_code = ${outcome.failureCode ?? null}
    where account_id = ${withdrawal.account_id} and id = ${withdrawal.id} and status = 'pending'
    returning *`
  if (!row) throw new Error(`withdrawal ${withdrawal.id} is no longer pending`)
  const money = { account_id: withdrawal.account_id, currency: withdrawal.currency }
  if (outcome.paid) {
    await postPayoutArrival(tx, money, withdrawal.id, withdrawal.amount_cents)
    await markPaidOut(tx, withdrawal.account_id, [], withdrawal.id)
  } else await postPayoutFailure(tx, money, withdrawal.id, withdrawal.amount_cents, 'payouts_in_transit')
  return row
}

/**
 * The processor never saw it: the pending withdrawal is canceled and its amount given back. Canceled, not deleted: the
 * ledger, append-only, keeps its reservation and the return, and they name it.
 */
export async function cancelPendingWithdrawal(tx: Transaction, accountId: string, operationId: string): Promise<void> {
  const [canceled] = await tx<WithdrawalRow[]>`
    update withdrawals set status = 'canceled'
    where account_id = ${accountId} and operation_id = ${operationId} and status = 'pending'
    returning *`
  if (canceled) {
    const money = { account_id: accountId, currency: canceled.currency }
    await postPayoutFailure(tx, money, canceled.id, canceled.amount_cents, 'payouts_in_transit')
  }
}

export async function findWithdrawal(sql: Sql, accountId: string, id: string): Promise<Withdrawal | undefined> {
  const [row] = await sql<WithdrawalRow[]>`select * from withdrawals where id = ${id} and account_id = ${accountId}`
  return row && toWithdrawal(row)
}

export async function listWithdrawals(
  sql: Sql,
  accountId: string,
  page: PageRequest,
): Promise<Page<Withdrawal> | undefined> {
  const found = await pageOf<WithdrawalRow>(sql, 'withdrawals', sql`account_id = ${accountId}`, page)
  return found && { rows: found.rows.map(toWithdrawal), hasMore: found.hasMore }
}

export function toWithdrawal(row: WithdrawalRow): Withdrawal {
  return {
    id: row.id,
    object: 'withdrawal',
    amount_cents: row.amount_cents,
    currency: row.currency as Withdrawal['currency'],
    description: row.description,
    status: row.status,
    failure_code: row.failure_code,
    processor_reference: row.processor_reference,
    created_at: row.created_at.toISOString(),
  }
}
