// Refunds in SQL, and their mapping to the API resource. A refund is pending from the moment its amount is
// reserved on the charge until the processor's answer is recorded.
import type { Sql, Transaction } from '../db/connect.js'
import { newId } from '../db/ids.js'
import { pageOf, type Page } from '../db/pagination.js'
import type { PageRequest } from '../schemas/page.js'
import { addRefundPending, lockCharge, settleRefundPending, toCharge } from '../charges/repository.js'
import type { Charge } from '../schemas/charge.js'
import type { Refund } from '../schemas/refund.js'
import { theRow } from '../db/rows.js'

export interface RefundRow {
  id: string
  account_id: string
  charge_id: string
  amount_cents: number
  currency: string
  status: Refund['status']
  failure_reason: string | null
  origin: Refund['origin']
  operation_id: string | null
  processor_reference: string | null
  /** Whether it gives back the platform's fee on the charge (sent to the processor with it). */
  refund_application_fee: boolean
  created_at: Date
}

export async function findRefund(sql: Sql, accountId: string, refundId: string): Promise<Refund | undefined> {
  const [row] = await sql<RefundRow[]>`select * from refunds where id = ${refundId} and account_id = ${accountId}`
  return row && toRefund(row)
}

export async function findRefundByOperation(tx: Transaction, operationId: string): Promise<RefundRow | undefined> {
  const [row] = await tx<RefundRow[]>`select * from refunds where operation_id = ${operationId}`
  return row
}

/** The account's refunds, or one charge's, newest first (src/db/pagination.ts). */
export async function listRefunds(
  sql: Sql,
  accountId: string,
  chargeId: string | undefined,
  page: PageRequest,
): Promise<Page<Refund> | undefined> {
  const scope = chargeId ? sql`account_id = ${accountId} and charge_id = ${chargeId}` : sql`account_id = ${accountId}`
  const found = await pageOf<RefundRow>(sql, 'refunds', scope, page)
  return found && { rows: found.rows.map(toRefund), hasMore: found.hasMore }
}

/** Writes a pending refund and reserves its amount on the charge (which the caller has locked). */
export async function insertPendingRefund(
  tx: Transaction,
  charge: { id: string; account_id: string; currency: string },
  refund: { amountCents: number; refundApplicationFee: boolean },
  operationId: string,
): Promise<RefundRow> {
  await addRefundPending(tx, charge, refund.amountCents)
  const rows = await tx<RefundRow[]>`
    insert into refunds (id, account_id, charge_id, amount_cents, currency, status, operation_id,
      refund_application_fee)
    values (${newId('re')}, ${charge.account_id}, ${charge.id}, ${refund.amountCents}, ${charge.currency}, 'pending',
      ${operationId}, ${refund.refundApplicationFee})
    returning *`
  return theRow(rows, 'the refund inserted')
}

/**
 * The processor refunded: the reserved amount becomes refunded, and the refund succeeded. Returns both as they now are.
 */
export async function markRefundSucceeded(
  tx: Transaction,
  refund: RefundRow,
  processorReference: string,
): Promise<{ refund: Refund; charge: Charge }> {
  const charge = await settleRefundPending(
    tx,
    { account_id: refund.account_id, id: refund.charge_id },
    refund.amount_cents,
  )
  const [row] = await tx<RefundRow[]>`
    update refunds set status = 'succeeded', processor_reference = ${processorReference}
    where id = ${refund.id} and status = 'pending'
    returning *`
  if (!row) throw new Error(`refund ${refund.id} is no longer pending`)
  return { refund: toRefund(row), charge: toCharge(charge) }
}

/**
 * The processor received the refund and decides it later: the refund stays pending, its amount reserved, now with
 * the processor's reference (what tells it from one still being recorded). Both as they now are.
 */
export async function awaitRefundDecision(
  tx: Transaction,
  refund: RefundRow,
  processorReference: string,
): Promise<{ refund: Refund; charge: Charge }> {
  const [row] = await tx<RefundRow[]>`
    update refunds set processor_reference = ${processorReference}
    where account_id = ${refund.account_id} and id = ${refund.id} and status = 'pending' and processor_reference is null
    returning *`
  if (!row) throw new Error(`refund ${refund.id} is no longer pending`)
  const charge = await lockCharge(tx, refund.account_id, refund.charge_id)
  if (!charge) throw new Error(`refund ${refund.id}'s charge ${refund.charge_id} is gone`)
  return { refund: toRefund(row), charge: toCharge(charge) }
}

/** Whether a pending refund waits for the processor's decision (it has its reference), or is being recorded. */
export const awaitsDecision = (refund: RefundRow) => refund.status === 'pending' && refund.processor_reference !== null

/**
 * The processor refused a refund it had received: the refund failed, and its reservation is given back. Both as
 * they now are.
 */
export async function markRefundRefused(
  tx: Transaction,
  refund: RefundRow,
  failureReason: string,
): Promise<{ refund: Refund; charge: Charge }> {
  const [row] = await tx<RefundRow[]>`
    update refunds set status = 'failed', failure_reason = ${failureReason}
    where account_id = ${refund.account_id} and id = ${refund.id} and status = 'pending' returning *`
  if (!row) throw new Error(`refund ${refund.id} is no longer pending`)
  const charge = await addRefundPending(
    tx,
    { account_id: refund.account_id, id: refund.charge_id },
    -refund.amount_cents,
  )
  return { refund: toRefund(row), charge: toCharge(charge) }
}

/** The processor never refunded: the reservation is given back and the pending refund forgotten. */
export async function deletePendingRefund(tx: Transaction, operationId: string): Promise<void> {
  const [deleted] = await tx<{ account_id: string; charge_id: string; amount_cents: number }[]>`
    delete from refunds where operation_id = ${operationId} and status = 'pending'
    returning account_id, charge_id, amount_cents`
  if (deleted)
    await addRefundPending(tx, { account_id: deleted.account_id, id: deleted.charge_id }, -deleted.amount_cents)
}

/**
 * The refund a processor's news is about, locked: by the operation id the service gave it, or, for one made at the
 * processor (its dashboard), by the processor's reference.
 */
export async function lockRefundOfProcessor(
  tx: Transaction,
  refund: { operationId?: string | null | undefined; reference: string },
): Promise<RefundRow | undefined> {
  const [row] = refund.operationId
    ? await tx<RefundRow[]>`select * from refunds where operation_id = ${refund.operationId} for update`
    : await tx<RefundRow[]>`
        select * from refunds where processor_reference = ${refund.reference} and operation_id is null for update`
  return row
}

/** A refund that succeeded failed later, as the processor told. */
export async function markRefundFailed(tx: Transaction, refund: RefundRow, failureReason: string): Promise<RefundRow> {
  const rows = await tx<RefundRow[]>`
    update refunds set status = 'failed', failure_reason = ${failureReason}
    where account_id = ${refund.account_id} and id = ${refund.id} returning *`
  return theRow(rows, `refund ${refund.id}`)
}

/**
 * A refund made at the processor (its dashboard), recorded as such: failed when `failureReason` is set. Undefined
 * when its twin (the same refund told by another event) is recorded already.
 */
export async function insertRefundMadeAtProcessor(
  tx: Transaction,
  charge: { id: string; account_id: string; currency: string },
  refund: { amountCents: number; failureReason: string | null; processorReference: string },
): Promise<RefundRow | undefined> {
  const status = refund.failureReason === null ? 'succeeded' : 'failed'
  const [row] = await tx<RefundRow[]>`
    insert into refunds (id, account_id, charge_id, amount_cents, currency, status, failure_reason, origin,
      processor_reference)
    values (${newId('re')}, ${charge.account_id}, ${charge.id}, ${refund.amountCents}, ${charge.currency}, ${status},
            ${refund.failureReason}, 'processor', ${refund.processorReference})
    on conflict (processor_reference) where operation_id is null do nothing
    returning *`
  return row
}

export function toRefund(row: RefundRow): Refund {
  return {
    id: row.id,
    object: 'refund',
    charge: row.charge_id,
    amount_cents: row.amount_cents,
    currency: row.currency as Refund['currency'],
    status: row.status,
    failure_reason: row.failure_reason,
    origin: row.origin,
    processor_reference: row.processor_reference,
    created_at: row.created_at.toISOString(),
  }
}
