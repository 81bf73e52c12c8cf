// Charges in SQL, and their mapping to the API resource. Writers take the transaction explicitly.
import type { Sql, Transaction } from '../db/connect.js'
import { pageOf, type Page } from '../db/pagination.js'
import type { RowInsert } from '../db/row-insert.js'
import type { ChargeOutcome, NextAction } from '../processor/processor.js'
import type { Charge, CreateChargeBody } from '../schemas/charge.js'
import type { PageRequest } from '../schemas/page.js'

export interface ChargeRow {
  id: string
  account_id: string
  amount_cents: number
  amount_captured_cents: number
  amount_refunded_cents: number
  amount_refund_pending_cents: number
  captured: boolean
  currency: string
  source: string
  description: string | null
  metadata: Record<string, string>
  status: Charge['status']
  failure_code: string | null
  failure_message: string | null
  processor_reference: string | null
  authorization_expires_at: Date | null
  next_action: Charge['next_action']
  dispute: Charge['dispute']
  pending_operation: 'capture' | 'void' | null
  pending_operation_id: string | null
  pending_amount_cents: number | null
  created_at: Date
}

/**
 * A new charge as it will be stored and returned, built here (created_at included) so that recording it needs no
 * answer from the database: its INSERT can go out in the same pipeline as the rest of the transaction. Its id was
 * decided before the processor was called (ChargeRequest.chargeId). With `authorizationExpiresAt`, a successful
 * outcome is an authorization to capture by then.
 */
export function newChargeRow(
  id: string,
  accountId: string,
  input: CreateChargeBody,
  outcome: ChargeOutcome,
  authorizationExpiresAt?: Date,
): ChargeRow {
  const failed = outcome.status === 'failed'
  const settled = outcome.status === 'succeeded'
  const authorized = settled && authorizationExpiresAt !== undefined
  const captured = settled && !authorized
  return {
    id,
    account_id: accountId,
    amount_cents: input.amount_cents,
    amount_captured_cents: captured ? input.amount_cents : 0,
    amount_refunded_cents: 0,
    amount_refund_pending_cents: 0,
    captured,
    currency: input.currency,
    source: input.source,
    description: input.description ?? null,
    metadata: inJsonbKeyOrder(input.metadata ?? {}),
    status: authorized ? 'requires_capture' : outcome.status,
    failure_code: failed ? outcome.failureCode : null,
    failure_message: failed ? outcome.failureMessage : null,
    processor_reference: outcome.processorReference ?? null,
    authorization_expires_at: authorized ? authorizationExpiresAt : null,
    next_action: outcome.status === 'requires_action' ? nextActionOf(outcome.nextAction) : null,
    dispute: null,
    pending_operation: null,
    pending_operation_id: null,
    pending_amount_cents: null,
    created_at: new Date(),
  }
}

function nextActionOf(action: NextAction): Charge['next_action'] {
  return action.type === 'redirect_to_url'
    ? { type: 'redirect_to_url', url: action.url, return_url: action.returnUrl }
    : { type: 'use_stripe_sdk', client_secret: action.clientSecret }
}

/** The insert of a charge built by newChargeRow: the columns a new charge sets (the rest keep their defaults). */
export function chargeInsert(row: ChargeRow): RowInsert {
  const {
    amount_refunded_cents,
    amount_refund_pending_cents,
    pending_operation,
    pending_operation_id,
    pending_amount_cents,
    ...inserted
  } = row
  return { table: 'charges', row: inserted }
}

/**
 * The key order jsonb stores (shorter keys first, then byte order), so the charge returned when it is created
 * reads exactly like the one read back from the database later.
 */
function inJsonbKeyOrder(metadata: Record<string, string>): Record<string, string> {
  const keys = Object.keys(metadata).sort(
    (a, b) => a.length - b.length || Buffer.compare(Buffer.from(a), Buffer.from(b)),
  )
  return Object.fromEntries(keys.map((key) => [key, metadata[key] as string]))
}

export async function findCharge(sql: Sql, accountId: string, chargeId: string): Promise<Charge | undefined> {
  const [row] = await sql<ChargeRow[]>`select * from charges where id = ${chargeId} and account_id = ${accountId}`
  return row && toCharge(row)
}

/** Locks the charge row until the transaction ends: operations on one charge are decided one at a time. */
export async function lockCharge(tx: Transaction, accountId: string, chargeId: string): Promise<ChargeRow | undefined> {
  const [row] = await tx<
    ChargeRow[]
  >`select * from charges where id = ${chargeId} and account_id = ${accountId} for update`
  return row
}

export async function listCharges(sql: Sql, accountId: string, page: PageRequest): Promise<Page<Charge> | undefined> {
  const found = await pageOf<ChargeRow>(sql, 'charges', sql`account_id = ${accountId}`, page)
  return found && { rows: found.rows.map(toCharge), hasMore: found.hasMore }
}

/** The charge a POST /v1/charges with this Idempotency-Key created (and completed), if any. */
export async function findChargeByIdempotencyKey(
  sql: Sql,
  accountId: string,
  key: string,
): Promise<Charge | undefined> {
  const [row] = await sql<ChargeRow[]>`
    select c.* from idempotency_keys k
    cross join lateral (select convert_from(k.response_body, 'UTF8')::jsonb as body) stored
    join charges c on c.account_id = k.account_id and c.id = coalesce(stored.body->>'id', stored.body->>'charge')
    where k.account_id = ${accountId} and k.endpoint = 'POST /v1/charges' and k.key = ${key}
      and k.completed_at is not null and k.expires_at > now()`
  return row && toCharge(row)
}

export function toCharge(row: ChargeRow): Charge {
  return {
    id: row.id,
    object: 'charge',
    amount_cents: row.amount_cents,
    amount_captured_cents: row.amount_captured_cents,
    amount_capturable_cents: row.status === 'requires_capture' ? row.amount_cents : 0,
    amount_refunded_cents: row.amount_refunded_cents,
    captured: row.captured,
    currency: row.currency as Charge['currency'],
    source: row.source,
    description: row.description,
    metadata: row.metadata,
    status: row.status,
    next_action: row.next_action,
    dispute: row.dispute,
    failure_code: row.failure_code,
    failure_message: row.failure_message,
    processor_reference: row.processor_reference,
    authorization_expires_at: row.authorization_expires_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  }
}
