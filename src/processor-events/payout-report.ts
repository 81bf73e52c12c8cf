// The payout report: each payout the processor told of, held against the books to the cent (docs/ledger.md,
// "Reconciling a payout"). From the processor: its amount and what it carries. From the books: what they posted of
// each carried transaction (charges, refunds, disputes, fees) and the shares paid out. A payout reconciles when
// what it carries adds up to its amount, each carried transaction is in the books with the processor's amount and
// fee, and the books paid out that amount. Every difference is named; the scheduled comparison records it as a
// discrepancy (payout_differs, fee_differs), and npm run reconcile:report -- --payouts prints the report.
import type { Sql } from '../db/connect.js'
import { carriedByPayout, findCarried, type PostedInBooks } from '../ledger/repository.js'
import type { PayoutState, PayoutStatus } from '../processor/later-outcomes.js'
import type { Logger } from 'pino'
import { type Discrepancy, recordDiscrepancies, resolveDiscrepancies } from './discrepancies.js'

export interface PayoutLine {
  payout: string
  /** When the service first heard of it. */
  told_at: string
  status: PayoutStatus
  currency: string
  /** The processor's amount. */
  amount_cents: number
  /** From the books, of what the payout carried: gross of charges, refunds (less their failures), disputes. */
  charges_cents: number
  refunds_cents: number
  disputes_cents: number
  /** The money of failed payouts, back in the balance and paid out again by this one. */
  payout_failures_cents: number
  fees_cents: number
  /** What the books paid out for it: the sum of the accounts' shares. */
  total_cents: number
  /** The processor's amount less the books' total. */
  difference_cents: number
  differences: string[]
  /** Carried transactions the books post a different fee for: (books' ledger transaction, detail). */
  fee_differences: { id: string; account_id: string; detail: string }[]
}

const STATUS_ORDER: Record<PayoutStatus, number> = { in_transit: 0, paid: 1, failed: 2 }

/** The payouts the processor told of since `since` (by when their news was received), oldest first. */
export async function payoutReport(sql: Sql, since: Date): Promise<PayoutLine[]> {
  const told = await sql<{ change: PayoutState; received_at: Date }[]>`
    select c as change, e.received_at from processor_events e, jsonb_array_elements(e.changes) c
    where e.type like 'payout.%' and e.received_at >= ${since} and c->>'object' = 'payout'
    order by e.received_at`
  // The furthest status told, and what it carries from whichever news told it.
  const payouts = new Map<string, PayoutState>()
  const toldAt = new Map<string, Date>()
  for (const { change, received_at } of told) {
    if (!toldAt.has(change.reference)) toldAt.set(change.reference, received_at)
    const known = payouts.get(change.reference)
    const furthest = !known || STATUS_ORDER[change.status] > STATUS_ORDER[known.status] ? change : known
    const carried = change.carried ?? known?.carried
    payouts.set(change.reference, carried ? { ...furthest, carried } : furthest)
  }
  const books = await carriedByPayout(sql, [...payouts.keys()])
  const lines: PayoutLine[] = []
  for (const payout of payouts.values())
    lines.push(await lineOf(sql, payout, toldAt.get(payout.reference) ?? since, books))
  return lines
}

async function lineOf(
  sql: Sql,
  payout: PayoutState,
  toldAt: Date,
  books: Awaited<ReturnType<typeof carriedByPayout>>,
): Promise<PayoutLine> {
  const mine = books.filter((row) => row.payout === payout.reference)
  const sum = (types: string[], pick: (row: (typeof mine)[number]) => number) =>
    mine.filter((row) => types.includes(row.type)).reduce((total, row) => total + pick(row), 0)
  const total = -sum(['payout'], (row) => row.amountCents)
  const line: PayoutLine = {
    payout: payout.reference,
    told_at: toldAt.toISOString(),
    status: payout.status,
    currency: payout.currency,
    amount_cents: payout.amountCents,
    charges_cents: sum(['charge'], (row) => row.amountCents),
    refunds_cents: sum(['refund', 'refund_failure'], (row) => row.amountCents),
    disputes_cents: sum(['dispute', 'dispute_reversal'], (row) => row.amountCents),
    payout_failures_cents: sum(['payout_failure'], (row) => row.amountCents),
    fees_cents: sum(['charge', 'refund', 'refund_failure', 'dispute', 'dispute_reversal'], (row) => row.feeCents),
    total_cents: total,
    difference_cents: payout.amountCents - total,
    differences: [],
    fee_differences: [],
  }
  if (!payout.carried) {
    line.differences.push('the processor has not told what it carries yet')
    return line
  }
  const carriedNet = payout.carried.reduce((net, each) => net + each.netCents, 0)
  if (carriedNet !== payout.amountCents)
    line.differences.push(`it carries ${carriedNet}, and pays out ${payout.amountCents}`)
  const found = await findCarried(sql, payout.carried)
  payout.carried.forEach((each, n) => {
    const posted = found[n]?.posted ?? []
    const [first] = posted
    const what = `${each.type} ${each.reference} (${each.netCents})`
    if (!first) {
      line.differences.push(
        each.chargeId || found[n]?.awaited
          ? `${what} is not in the books yet`
          : `${what} is not of a payment this service made`,
      )
      return
    }
    const books = (pick: (one: PostedInBooks) => number) => posted.reduce((sum, one) => sum + pick(one), 0)
    if (books((one) => one.amountCents) !== each.amountCents)
      line.differences.push(
        `${what}: the books post ${books((one) => one.amountCents)}, the processor ${each.amountCents}`,
      )
    if (books((one) => one.feeCents) !== each.feeCents)
      line.fee_differences.push({
        id: first.id,
        account_id: first.accountId,
        detail: `${what}: the books' fee is ${books((one) => one.feeCents)}, the processor's ${each.feeCents}`,
      })
  })
  if (line.difference_cents !== 0) line.differences.push(`the books paid out ${total} of its ${payout.amountCents}`)
  return line
}

/**
 * The payouts told of in the last `days` days held against the books, as the scheduled comparison does after
 * reading the processor's events: each difference recorded (a fee that differs is about what both sides have
 * posted for good, so it is resolved by hand), a payout that agrees now resolved. Payouts first told less than
 * `settleMarginMs` ago are left to the next run: what they carry may still be on its way.
 */
export async function comparePayouts(
  sql: Sql,
  log: Logger,
  options: { days?: number; settleMarginMs?: number } = {},
): Promise<{ payouts: number; found: number }> {
  const since = new Date(Date.now() - (options.days ?? 7) * 86_400_000)
  const settledBefore = Date.now() - (options.settleMarginMs ?? 10 * 60_000)
  const lines = (await payoutReport(sql, since)).filter((line) => Date.parse(line.told_at) < settledBefore)
  const { found, agreed } = payoutDiscrepancies(lines)
  const fresh = await recordDiscrepancies(sql, found, log)
  await resolveDiscrepancies(sql, ['payout_differs'], agreed)
  return { payouts: lines.length, found: fresh }
}

/** The report's differences as the comparison records them: one per payout that differs, one per fee. */
export function payoutDiscrepancies(lines: PayoutLine[]): { found: Discrepancy[]; agreed: string[] } {
  const found: Discrepancy[] = []
  const agreed: string[] = []
  for (const line of lines) {
    const books = { total_cents: line.total_cents, charges_cents: line.charges_cents, fees_cents: line.fees_cents }
    const processor = { amount_cents: line.amount_cents, status: line.status }
    if (line.differences.length > 0)
      found.push({
        kind: 'payout_differs',
        reference: line.payout,
        accountId: null,
        detail: line.differences.join('; '),
        books,
        processor,
      })
    else agreed.push(line.payout)
    for (const fee of line.fee_differences)
      found.push({
        kind: 'fee_differs',
        reference: fee.id,
        accountId: fee.account_id,
        detail: fee.detail,
        books,
        processor,
      })
  }
  return { found, agreed }
}

const CSV_COLUMNS = [
  'payout',
  'status',
  'currency',
  'amount_cents',
  'charges_cents',
  'refunds_cents',
  'disputes_cents',
  'payout_failures_cents',
  'fees_cents',
  'total_cents',
  'difference_cents',
  'differences',
] as const

/** One line per payout, RFC 4180: a field with a comma, a quote or a line break is quoted. */
export function payoutReportCsv(lines: PayoutLine[]): string {
  const field = (value: unknown) => {
    const text = String(value)
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
  }
  const rows = lines.map((line) =>
    CSV_COLUMNS.map((column) =>
      field(
        column === 'differences'
          ? [...line.differences, ...line.fee_differences.map((fee) => fee.detail)].join('; ')
          : line[column],
      ),
    ).join(','),
  )
  return `${[CSV_COLUMNS.join(','), ...rows].join('\r\n')}\r\n`
}
