// Posts what moved money before the ledger existed (npm run ledger:backfill; docs/ledger.md, "Money moved before
// the ledger"): a database upgraded to migration 0014 posts from then on, so its older captures, refunds and
// disputes have no balance transactions, and a payout that carries them waits. Each is posted as the live path
// posts it, once per cause (a posting already there, live or backfilled, is left as it is), with the pricing
// configured now and the funds available as long after the capture as FUNDS_AVAILABLE_AFTER_DAYS says. A refund
// that failed is left out: its refund and its failure move nothing together. Account by account, in batches of
// charges by their order, each batch in one transaction; run it again, and it posts nothing.
import type { Sql, Transaction } from '../db/connect.js'
import type { ChargeRow } from '../charges/repository.js'
import type { RefundRow } from '../refunds/repository.js'
import { postCapture, postDisputeReversal, postDisputeWithdrawal, postRefund } from './postings.js'
import type { Pricing } from './pricing.js'

export interface Backfilled {
  accounts: number
  charges: number
  /** Ledger transactions posted now (those posted already are not counted). */
  posted: number
}

async function postingsOf(tx: Transaction, accountId: string): Promise<number> {
  const [row] = await tx<
    { count: number }[]
  >`select count(*)::int from ledger_transactions where account_id = ${accountId}`
  return row?.count ?? 0
}

export async function backfillLedger(sql: Sql, pricing: Pricing, batchSize = 500): Promise<Backfilled> {
  const done: Backfilled = { accounts: 0, charges: 0, posted: 0 }
  const accounts = await sql<{ id: string }[]>`select id from accounts order by id`
  for (const { id: accountId } of accounts) {
    done.accounts++
    for (let after = '0'; ; ) {
      const charges = await sql<(ChargeRow & { seq: string })[]>`
        select * from charges where account_id = ${accountId} and seq > ${after}
          and (amount_captured_cents > 0 or dispute is not null)
        order by seq limit ${batchSize}`
      if (charges.length === 0) break
      after = charges.at(-1)?.seq ?? after
      done.charges += charges.length
      done.posted += await sql.begin(async (tx) => {
        const refunds = await tx<RefundRow[]>`
          select * from refunds where account_id = ${accountId} and status = 'succeeded'
            and charge_id = any(${charges.map((charge) => charge.id)}::text[])`
        const before = await postingsOf(tx, accountId)
        for (const charge of charges) {
          if (charge.amount_captured_cents > 0)
            await postCapture(tx, pricing, charge, charge.amount_captured_cents, { movedAt: charge.created_at })
          const dispute = charge.dispute
          if (dispute) {
            const money = { amountCents: dispute.amount_cents }
            await postDisputeWithdrawal(tx, pricing, charge, dispute.processor_reference, money)
            if (dispute.status === 'won') await postDisputeReversal(tx, charge, dispute.processor_reference, money)
          }
        }
        for (const refund of refunds) await postRefund(tx, refund, refund.created_at)
        return (await postingsOf(tx, accountId)) - before
      })
    }
  }
  return done
}
