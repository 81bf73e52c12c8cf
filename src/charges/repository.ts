// Charges in SQL, and their mapping to the API resource: every statement that writes a charge is here, and the
// modules that move one (settle.ts, refunds, the later outcomes, the expiry) call it. Writers take the
// transaction explicitly, and every statement names the charge's account as well as its id.
import type { Fragment } from 'postgres'
import type { Sql, Transaction } from '../db/connect.js'
import { gatheredInsert } from '../db/gathered-inserts.js'
import { theRow } from '../db/rows.js'
import { pageOf, type Page } from '../db/pagination.js'
import type { ChargeOutcome, NextAction } from '../processor/processor.js'
import type { Charge, CreateChargeBody } from '../schemas/charge.js'
import type { PageRequest } from '../schemas/page.js'
import type { AuthenticatedAccount } from '../accounts/api-keys.js'

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
  /** The processor account it was made on (a connected account's acct_…), null for the platform's: never shown. */
  processor_account: string | null
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
 * answer from the database: its INSERT goes out together with its event's (recordCharge). Its id was
 * decided before the processor was called (ChargeRequest.chargeId). With `authorizationExpiresAt`, a successful
 * outcome is an authorization to capture by then.
 */
export function newChargeRow(
  id: string,
  account: AuthenticatedAccount,
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
    account_id: account.id,
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
    processor_account: account.processorAccount,
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

/**
 * Inserts a charge built by newChargeRow: the columns a new charge sets (the rest keep their defaults). In a
 * completion's transaction it goes out with the other charges completed together, in one statement
 * (src/db/gathered-inserts.ts).
 */
export const insertCharge = gatheredInsert<ChargeRow>((sql, rows) => {
  const column = <T>(value: (row: ChargeRow) => T) => rows.map(value)
  return sql`
    insert into charges (id, account_id, amount_cents, amount_captured_cents, captured, currency, source, description,
      metadata, status, failure_code, failure_message, processor_reference, processor_account, authorization_expires_at,
      next_action, dispute, created_at)
    select * from unnest(${column((row) => row.id)}::text[], ${column((row) => row.account_id)}::text[],
      ${column((row) => row.amount_cents)}::int[], ${column((row) => row.amount_captured_cents)}::int[],
      ${column((row) => row.captured)}::bool[], ${column((row) => row.currency)}::text[],
      ${column((row) => row.source)}::text[], ${column((row) => row.description)}::text[],
      ${column((row) => JSON.stringify(row.metadata))}::text[]::jsonb[], ${column((row) => row.status)}::text[],
      ${column((row) => row.failure_code)}::text[], ${column((row) => row.failure_message)}::text[],
      ${column((row) => row.processor_reference)}::text[], ${column((row) => row.processor_account)}::text[],
      ${column((row) => row.authorization_expires_at)}::timestamptz[],
      ${column((row) => jsonOrNull(row.next_action))}::text[]::jsonb[],
      ${column((row) => jsonOrNull(row.dispute))}::text[]::jsonb[], ${column((row) => row.created_at)}::timestamptz[])`
})

/** jsonb sent as text in an array (an array of objects is not a parameter postgres.js takes). */
function jsonOrNull(value: object | null): string | null {
  return value === null ? null : JSON.stringify(value)
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

/** The charge the processor tells of, by the id the service gave it, locked: the processor's news names no account. */
export async function lockChargeById(tx: Transaction, chargeId: string): Promise<ChargeRow | undefined> {
  const [row] = await tx<ChargeRow[]>`select * from charges where id = ${chargeId} for update`
  return row
}

/**
 * Where a charge was made: its processor account and its payment there, set when it is recorded and never changed,
 * so read without a lock (a lock here, taken after its refund's, would deadlock with a refund being recorded).
 */
export async function whereMade(
  tx: Transaction,
  chargeId: string,
): Promise<Pick<ChargeRow, 'id' | 'processor_account' | 'processor_reference'> | undefined> {
  const [row] = await tx<Pick<ChargeRow, 'id' | 'processor_account' | 'processor_reference'>[]>`
    select id, processor_account, processor_reference from charges where id = ${chargeId}`
  return row
}

/** Whether the books hold the charge, not captured yet (false when they do not hold it yet). */
export async function isHeldUncaptured(sql: Sql, chargeId: string): Promise<boolean> {
  const [row] = await sql<{ captured: boolean }[]>`select captured from charges where id = ${chargeId}`
  return row?.captured === false
}

/** What a charge's writers name it by. */
type ChargeKey = Pick<ChargeRow, 'account_id' | 'id'>

/** A capture or void about to be asked of the processor becomes the charge's pending operation. */
export async function setPendingOperation(
  tx: Transaction,
  charge: ChargeKey,
  pending: { kind: 'capture' | 'void'; operationId: string; amountCents: number | null },
): Promise<ChargeRow> {
  const rows = await tx<ChargeRow[]>`
    update charges set pending_operation = ${pending.kind}, pending_operation_id = ${pending.operationId},
                       pending_amount_cents = ${pending.amountCents}, pending_until = null
    where account_id = ${charge.account_id} and id = ${charge.id} returning *`
  return theRow(rows, `charge ${charge.id}`)
}

/** How a pending capture or void settles the charge. */
export type Settled =
  | { status: 'succeeded'; captured: true; amount_captured_cents: number }
  | { status: 'voided' | 'expired' }

/**
 * The pending operation done: the charge settled as it says, where that operation is still the pending one and the
 * charge still awaits capture; undefined otherwise.
 */
export async function settlePendingOperation(
  tx: Transaction,
  charge: ChargeKey & Pick<ChargeRow, 'pending_operation_id'>,
  settled: Settled,
): Promise<ChargeRow | undefined> {
  const [row] = await tx<ChargeRow[]>`
    update charges set ${tx(settled)}, ${noPendingOperation(tx)}
    where account_id = ${charge.account_id} and id = ${charge.id}
      and pending_operation_id = ${charge.pending_operation_id} and status = 'requires_capture'
    returning *`
  return row
}

/**
 * The pending capture or void received by the processor, to be decided by its later news: the charge waits in
 * capture_pending or void_pending with the operation still pending on it. Undefined where that operation is no
 * longer the pending one, or the charge no longer awaits capture.
 */
export async function awaitDecision(
  tx: Transaction,
  charge: ChargeKey & Pick<ChargeRow, 'pending_operation_id' | 'pending_operation'>,
): Promise<ChargeRow | undefined> {
  const [row] = await tx<ChargeRow[]>`
    update charges set status = ${`${charge.pending_operation}_pending`}
    where account_id = ${charge.account_id} and id = ${charge.id}
      and pending_operation_id = ${charge.pending_operation_id} and status = 'requires_capture'
    returning *`
  return row
}

/** The processor never saw the pending operation: the charge is free for another capture or void. */
export async function clearPendingOperation(
  db: Sql | Transaction,
  charge: { accountId: string; chargeId: string },
  operationId: string,
): Promise<void> {
  await db`
    update charges set ${noPendingOperation(db)}
    where account_id = ${charge.accountId} and id = ${charge.chargeId} and pending_operation_id = ${operationId}`
}

const noPendingOperation = (db: Sql | Transaction): Fragment =>
  db`pending_operation = null, pending_operation_id = null, pending_amount_cents = null, pending_until = null`

/** Which authorizations a run expires: every account's, by now (the schedule's run), or one account's, by `at`. */
export interface ExpiryScope {
  accountId?: string | undefined
  at?: Date | undefined
}

/**
 * Up to `batchSize` authorizations past their expiry, across accounts, each taking its void (with the durable key
 * void:<charge>) as its pending operation for `leaseSeconds`; one a crashed run left pending is taken again.
 */
/** The durable key the expiry worker voids a lapsed authorization under (one per charge). */
export const expiryVoidKey = (chargeId: string) => `void:${chargeId}`

/** Whether the charge's pending void is the expiry worker's (its key), not a request's. */
export const isExpiryVoid = (charge: Pick<ChargeRow, 'id' | 'pending_operation_id'>) =>
  charge.pending_operation_id === expiryVoidKey(charge.id)

export async function claimExpiredAuthorizations(
  sql: Sql,
  options: { batchSize: number; leaseSeconds: number } & ExpiryScope,
): Promise<ChargeRow[]> {
  const { accountId = null, at = null } = options
  // Each claimed with expiryVoidKey's key, written here in SQL for the whole batch.
  return sql<ChargeRow[]>`
    update charges set pending_operation = 'void', pending_operation_id = 'void:' || id,
                       pending_until = now() + ${options.leaseSeconds} * interval '1 second'
    where (account_id, id) in (
      select account_id, id from charges
      where status = 'requires_capture' and authorization_expires_at <= coalesce(${at}::timestamptz, now())
        and (${accountId}::text is null or account_id = ${accountId}::text)
        and (pending_operation is null or (pending_operation_id = 'void:' || id and pending_until <= now()))
      order by authorization_expires_at limit ${options.batchSize}
      for update skip locked)
    returning *`
}

/** Reserves (or, negative, gives back) a refund's amount on the charge; the charge as it now is. */
export async function addRefundPending(tx: Transaction, charge: ChargeKey, amountCents: number): Promise<ChargeRow> {
  const rows = await tx<ChargeRow[]>`
    update charges set amount_refund_pending_cents = amount_refund_pending_cents + ${amountCents}
    where account_id = ${charge.account_id} and id = ${charge.id}
    returning *`
  return theRow(rows, `charge ${charge.id}`)
}

/**
 * A reserved refund done: its amount moves from pending to refunded. The charges check constraint (refunded +
 * pending <= captured) backs up the reservation.
 */
export async function settleRefundPending(tx: Transaction, charge: ChargeKey, amountCents: number): Promise<ChargeRow> {
  const rows = await tx<ChargeRow[]>`
    update charges set amount_refunded_cents = amount_refunded_cents + ${amountCents},
                       amount_refund_pending_cents = amount_refund_pending_cents - ${amountCents}
    where account_id = ${charge.account_id} and id = ${charge.id}
    returning *`
  return theRow(rows, `charge ${charge.id}`)
}

/** A refund the processor made, or (negative) one it failed later: what is refunded of the charge moves by it. */
export async function addRefunded(tx: Transaction, charge: ChargeKey, amountCents: number): Promise<ChargeRow> {
  const rows = await tx<ChargeRow[]>`
    update charges set amount_refunded_cents = amount_refunded_cents + ${amountCents}
    where account_id = ${charge.account_id} and id = ${charge.id}
    returning *`
  return theRow(rows, `charge ${charge.id}`)
}

/**
 * A move the processor told of (src/processor-events/charge-moves.ts decides it): the charge's new status and details.
 */
export async function moveCharge(
  tx: Transaction,
  charge: ChargeKey,
  set: Partial<ChargeRow> & { status: ChargeRow['status'] },
): Promise<ChargeRow> {
  const rows = await tx<ChargeRow[]>`
    update charges set ${tx(set)} where account_id = ${charge.account_id} and id = ${charge.id} returning *`
  return theRow(rows, `charge ${charge.id}`)
}

/** The charge's dispute as the processor last told it. */
export async function setDispute(
  tx: Transaction,
  charge: ChargeKey,
  dispute: NonNullable<Charge['dispute']>,
): Promise<ChargeRow> {
  const rows = await tx<ChargeRow[]>`
    update charges set dispute = ${tx.json(dispute as never)}
    where account_id = ${charge.account_id} and id = ${charge.id} returning *`
  return theRow(rows, `charge ${charge.id}`)
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
