// Withdrawals in SQL, and the withdrawal as the API returns it. Their money is the ledger's, posted by the phases
// (withdrawals.ts) in the transaction that makes each write here: a repository writes rows, never money.
import type { Sql, Transaction } from '../db/connect.js'
import { pageOf, type Page } from '../db/pagination.js'
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

/** Writes the withdrawal pending, in the caller's transaction (whose reservation took its amount). */
export async function insertPendingWithdrawal(
  tx: Transaction,
  id: string,
  withdrawal: {
    accountId: string
    amountCents: number
    currency: string
    description: string | null
    operationId: string
  },
): Promise<WithdrawalRow> {
  const [row] = await tx<WithdrawalRow[]>`
    insert into withdrawals (id, account_id, amount_cents, currency, description, status, operation_id)
    values (${id}, ${withdrawal.accountId}, ${withdrawal.amountCents}, ${withdrawal.currency},
      ${withdrawal.description}, 'pending', ${withdrawal.operationId})
    returning *`
  return row as WithdrawalRow
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

/** The processor's answer: paid, or failed. */
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
  return row
}

/** The processor never saw it: the pending withdrawal is canceled (not deleted: the ledger's postings name it). */
export async function cancelPendingWithdrawal(
  tx: Transaction,
  accountId: string,
  operationId: string,
): Promise<WithdrawalRow | undefined> {
  const [canceled] = await tx<WithdrawalRow[]>`
    update withdrawals set status = 'canceled'
    where account_id = ${accountId} and operation_id = ${operationId} and status = 'pending'
    returning *`
  return canceled
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
