// A merchant's queue worker that collects invoices through the client: the example to copy for calling this API
// from a job that may run twice. graphile-worker redelivers a job whose worker died, so the charge must be the
// same request every time the job runs: its key is derived from the invoice, charge:<invoice>:attempt:<n>, and
// n moves only when a person or policy decides to try again after a definitive decline, never after a timeout,
// a crash or a 5xx (whose outcome is unknown, and which the same key settles).
import { runMigrations, type Task } from 'graphile-worker'
import { type CreateChargeBody, idempotencyKey, ProblemError, type PaymentsClient } from 'payments-api/client'
import type { Sql } from '../../src/db/connect.js'
import { withGraphilePool } from '../../src/db/graphile-pool.js'
import { prepareLivenessTable } from './liveness.js'
import { theRow } from '../../src/db/rows.js'

export const COLLECT_TASK = 'collect_invoice'
/** The collector's own graphile-worker schema: its jobs stay apart from the payments service's. */
export const COLLECTOR_WORKER_SCHEMA = 'invoice_collector_worker'

export interface Invoice {
  id: string
  amount_cents: number
  currency: CreateChargeBody['currency']
  source: string
  status: 'open' | 'paid' | 'declined'
  /** The n of charge:<invoice>:attempt:<n>: the attempt under way, or the last one made. */
  attempt: number
  charge_id: string | null
  failure: string | null
}

export async function prepareCollector(sql: Sql, connectionString: string): Promise<void> {
  await withGraphilePool(connectionString, 'invoice collector migrate', (pgPool) =>
    runMigrations({ pgPool, schema: COLLECTOR_WORKER_SCHEMA }),
  )
  await sql`create schema if not exists invoice_collector`
  await sql`create table if not exists invoice_collector.invoices (
    id text primary key check (char_length(id) <= 64),
    amount_cents integer not null check (amount_cents > 0),
    currency text not null check (currency ~ '^[a-z]{3}$'),
    source text not null check (char_length(source) <= 255),
    status text not null default 'open' check (status in ('open', 'paid', 'declined')),
    attempt integer not null default 1 check (attempt > 0),
    charge_id text check (char_length(charge_id) <= 64),
    failure text check (char_length(failure) <= 1000),
    updated_at timestamptz not null default now())`
  await prepareLivenessTable(sql)
}

/** A new invoice and the job that collects it, in one transaction: there is never an invoice nobody collects. */
export async function addInvoice(
  sql: Sql,
  invoice: Pick<Invoice, 'amount_cents' | 'currency' | 'source'>,
): Promise<Invoice> {
  return sql.begin(async (tx) => {
    const id = `inv_${globalThis.crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`
    const rows = await tx<Invoice[]>`
      insert into invoice_collector.invoices (id, amount_cents, currency, source)
      values (${id}, ${invoice.amount_cents}, ${invoice.currency}, ${invoice.source}) returning *`
    await tx`select ${tx(COLLECTOR_WORKER_SCHEMA)}.add_job(${COLLECT_TASK}, json_build_object('invoice_id',
      ${id}::text))`
    return theRow(rows, 'the invoice inserted')
  })
}

/** The deliberate new attempt after a decline (a new card, a dunning step): attempt n + 1, and its job. */
export async function retryInvoice(
  sql: Sql,
  invoiceId: string,
  change: { source?: string } = {},
): Promise<Invoice | undefined> {
  return sql.begin(async (tx) => {
    const [row] = await tx<Invoice[]>`
      update invoice_collector.invoices set status = 'open', attempt = attempt + 1, failure = null, charge_id = null,
                                            source = coalesce(${change.source ?? null}, source), updated_at = now()
      where id = ${invoiceId} and status = 'declined' returning *`
    if (row)
      await tx`select ${tx(COLLECTOR_WORKER_SCHEMA)}.add_job(${COLLECT_TASK}, json_build_object('invoice_id',
        ${invoiceId}::text))`
    return row
  })
}

export function collectInvoiceTask(sql: Sql, client: PaymentsClient, log: (message: string) => void = () => {}): Task {
  return async (payload) => {
    const invoiceId = (payload as { invoice_id?: unknown } | null)?.invoice_id
    if (typeof invoiceId !== 'string') throw new Error(`${COLLECT_TASK}: payload has no invoice_id`)
    const [invoice] = await sql<Invoice[]>`select * from invoice_collector.invoices where id = ${invoiceId}`
    if (invoice?.status !== 'open') return // paid or declined by an earlier run of this job: nothing left to do

    const key = idempotencyKey.derive('charge', invoice.id, 'attempt', invoice.attempt)
    try {
      const charge = await client.charges.create(
        {
          amount_cents: invoice.amount_cents,
          currency: invoice.currency,
          source: invoice.source,
          metadata: { invoice: invoice.id },
        },
        { idempotencyKey: key },
      )
      await sql`
        update invoice_collector.invoices set status = 'paid', charge_id = ${charge.data.id}, updated_at = now()
        where id = ${invoice.id} and attempt = ${invoice.attempt}`
      log(`${invoice.id} paid by ${charge.data.id} (key ${key}${charge.replayed ? ', replayed' : ''})`)
    } catch (error) {
      if (error instanceof ProblemError && error.is('card-declined')) {
        // A definitive answer: this attempt is over. Trying again is a decision (retryInvoice), with a new n.
        await sql`
          update invoice_collector.invoices set status = 'declined', charge_id =
            ${String(error.problem.charge ?? '') || null},
                                                failure = ${error.problem.detail}, updated_at = now()
          where id = ${invoice.id} and attempt = ${invoice.attempt}`
        log(`${invoice.id} declined (key ${key}): ${error.problem.detail}`)
        return
      }
      // Anything else (no answer, a 5xx after the client's own retries): the outcome may be unknown. Failing the
      // job makes graphile-worker run it again later, with the same key, which settles it.
      throw error
    }
  }
}
