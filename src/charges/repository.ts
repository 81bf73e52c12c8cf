// Charges in SQL, and their mapping to the API resource. Writers take the transaction explicitly.
import type { Sql, Transaction } from '../db/connect.js'
import { newId } from '../db/ids.js'
import type { ChargeOutcome } from '../processor/processor.js'
import type { Charge, CreateChargeBody } from '../schemas/charge.js'

export interface ChargeRow {
  id: string
  account_id: string
  amount_cents: number
  amount_refunded_cents: number
  amount_refund_pending_cents: number
  currency: string
  source: string
  description: string | null
  metadata: Record<string, string>
  status: 'succeeded' | 'failed'
  failure_code: string | null
  failure_message: string | null
  processor_reference: string | null
  created_at: Date
}

/**
 * A new charge as it will be stored and returned, built here (id and created_at included) so that recording it
 * needs no answer from the database: its INSERT can go out in the same pipeline as the rest of the transaction.
 */
export function newChargeRow(accountId: string, input: CreateChargeBody, outcome: ChargeOutcome): ChargeRow {
  const failed = outcome.status === 'failed'
  return {
    id: newId('ch'),
    account_id: accountId,
    amount_cents: input.amount_cents,
    amount_refunded_cents: 0,
    amount_refund_pending_cents: 0,
    currency: input.currency,
    source: input.source,
    description: input.description ?? null,
    metadata: inJsonbKeyOrder(input.metadata ?? {}),
    status: outcome.status,
    failure_code: failed ? outcome.failureCode : null,
    failure_message: failed ? outcome.failureMessage : null,
    processor_reference: failed ? null : outcome.processorReference,
    created_at: new Date(),
  }
}

/** The INSERT of a charge built by newChargeRow, not yet run: `db` is where it will run. */
export function insertChargeRow(db: Sql | Transaction, row: ChargeRow) {
  return db`
    insert into charges (id, account_id, amount_cents, currency, source, description, metadata,
                         status, failure_code, failure_message, processor_reference, created_at)
    values (${row.id}, ${row.account_id}, ${row.amount_cents}, ${row.currency}, ${row.source},
            ${row.description}, ${db.json(row.metadata)}, ${row.status},
            ${row.failure_code}, ${row.failure_message}, ${row.processor_reference}, ${row.created_at})`
}

/**
 * The key order jsonb stores (shorter keys first, then byte order), so the charge returned when it is created
 * reads exactly like the one read back from the database later.
 */
function inJsonbKeyOrder(metadata: Record<string, string>): Record<string, string> {
  const keys = Object.keys(metadata).sort((a, b) => a.length - b.length || Buffer.compare(Buffer.from(a), Buffer.from(b)))
  return Object.fromEntries(keys.map((key) => [key, metadata[key]!]))
}

export async function findCharge(sql: Sql, accountId: string, chargeId: string): Promise<Charge | undefined> {
  const [row] = await sql<ChargeRow[]>`select * from charges where id = ${chargeId} and account_id = ${accountId}`
  return row && toCharge(row)
}

/** Locks the charge row until the transaction ends: operations on one charge are decided one at a time. */
export async function lockCharge(tx: Transaction, accountId: string, chargeId: string): Promise<ChargeRow | undefined> {
  const [row] = await tx<ChargeRow[]>`select * from charges where id = ${chargeId} and account_id = ${accountId} for update`
  return row
}

/** Newest first. `startingAfter` must be a charge of the same account, or the page is undefined. */
export async function listCharges(
  sql: Sql,
  accountId: string,
  page: { limit: number; startingAfter?: string | undefined },
): Promise<{ charges: Charge[]; hasMore: boolean } | undefined> {
  let cursor: string | null = null
  if (page.startingAfter) {
    const [found] = await sql<{ seq: string }[]>`select seq from charges where id = ${page.startingAfter} and account_id = ${accountId}`
    if (!found) return undefined
    cursor = found.seq
  }
  const rows = await sql<ChargeRow[]>`
    select * from charges
    where account_id = ${accountId} and (${cursor}::bigint is null or seq < ${cursor}::bigint)
    order by seq desc
    limit ${page.limit + 1}`
  return { charges: rows.slice(0, page.limit).map(toCharge), hasMore: rows.length > page.limit }
}

export function toCharge(row: ChargeRow): Charge {
  return {
    id: row.id,
    object: 'charge',
    amount_cents: row.amount_cents,
    amount_refunded_cents: row.amount_refunded_cents,
    currency: row.currency as Charge['currency'],
    source: row.source,
    description: row.description,
    metadata: row.metadata,
    status: row.status,
    failure_code: row.failure_code,
    failure_message: row.failure_message,
    created_at: row.created_at.toISOString(),
  }
}
