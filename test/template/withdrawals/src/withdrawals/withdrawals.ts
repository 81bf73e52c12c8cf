// A withdrawal in brandur's atomic phases, as a refund is, because its money can run out:
//   1. reserve: take the amount from the balance (the ledger's) and write the withdrawal pending (one
//      transaction, fenced by the key's token: operation.reserve). A retry of the same operation finds its pending
//      withdrawal instead.
//   2. call out: the processor, with the claim's operation id as its idempotency key (operation.callOut)
//   3. record and complete: paid (or failed, the amount given back), its event, in the transaction that stores
//      the response (operation.complete)
// A reservation whose operation never went downstream is given back with the key (withdrawalRecovery's release).
import type { Transaction } from '../db/connect.js'
import { newId } from '../db/ids.js'
import { insertEvent } from '../events/events.js'
import type { RouteResponse } from '../idempotency/response.js'
import { postPayoutArrival, postPayoutFailure, reserveFromBalance } from '../ledger/postings.js'
import { markPaidOut } from '../ledger/repository.js'
import type { WithdrawalOutcome, WithdrawalRequest } from '../processor/processor.js'
import { Problem } from '../problems.js'
import type { CreateWithdrawalBody } from '../schemas/withdrawal.js'
import {
  cancelPendingWithdrawal,
  findWithdrawalByOperation,
  insertPendingWithdrawal,
  markWithdrawal,
  type WithdrawalRow,
  toWithdrawal,
} from './repository.js'

/**
 * Phase 1: the amount leaves the balance (a `payout` posting of the ledger) if what is available at `now` holds
 * it, and the withdrawal is written pending, in the caller's transaction. The balance's lock, taken first, makes two
 * withdrawals at once wait for each other, so they cannot both spend the same money. Refuses with a problem the
 * client can act on; a 4xx here leaves the key free for a corrected retry.
 */
export async function reserveWithdrawal(
  tx: Transaction,
  accountId: string,
  input: CreateWithdrawalBody,
  operationId: string,
  /** What time it is for the balance: what is available by then may be paid out. */
  now: Date,
): Promise<WithdrawalRow> {
  const existing = await findWithdrawalByOperation(tx, accountId, operationId)
  if (existing?.status === 'pending') return existing
  const id = newId('wdr')
  const money = { account_id: accountId, currency: input.currency }
  if (!(await reserveFromBalance(tx, money, id, input.amount_cents, now)))
    throw new Problem(
      'withdrawal-exceeds-balance',
      `The available ${input.currency} balance does not hold ${input.amount_cents}.`,
    )
  return insertPendingWithdrawal(tx, id, {
    accountId,
    amountCents: input.amount_cents,
    currency: input.currency,
    description: input.description ?? null,
    operationId,
  })
}

/**
 * What the processor is sent: the route sends it, the recovery worker asks about it. On the account's processor
 * account (the request's; the claim's for the recovery worker), as every call for a linked account is.
 */
export function withdrawalCall(
  withdrawal: WithdrawalRow,
  processorAccount: string | null,
  idempotencyKey: string,
): WithdrawalRequest {
  return {
    amountCents: withdrawal.amount_cents,
    currency: withdrawal.currency,
    accountId: withdrawal.account_id,
    processorAccount,
    idempotencyKey,
  }
}

/**
 * Phase 3: what the processor did becomes the withdrawal, its money moves on (paid: in transit to the bank, and
 * marked paid out; failed: back into the balance), its event, and the response a request for it returns.
 */
export async function recordWithdrawal(
  tx: Transaction,
  withdrawal: WithdrawalRow,
  outcome: WithdrawalOutcome,
): Promise<RouteResponse> {
  const paid = outcome.status === 'paid'
  const row = await markWithdrawal(
    tx,
    withdrawal,
    paid ? { paid, processorReference: outcome.processorReference } : { paid, failureCode: outcome.failureCode },
  )
  const money = { account_id: row.account_id, currency: row.currency }
  if (paid) {
    await postPayoutArrival(tx, money, row.id, row.amount_cents)
    await markPaidOut(tx, row.account_id, [], row.id)
  } else await postPayoutFailure(tx, money, row.id, row.amount_cents, 'payouts_in_transit')
  const settled = toWithdrawal(row)
  await insertEvent(tx, row.account_id, paid ? 'withdrawal.paid' : 'withdrawal.failed', { object: settled })
  return { status: 201, location: `/v1/withdrawals/${settled.id}`, body: settled }
}

/** The processor never saw it: the pending withdrawal is canceled and its amount given back into the balance. */
export async function cancelWithdrawal(tx: Transaction, accountId: string, operationId: string): Promise<void> {
  const canceled = await cancelPendingWithdrawal(tx, accountId, operationId)
  if (canceled) {
    const money = { account_id: accountId, currency: canceled.currency }
    await postPayoutFailure(tx, money, canceled.id, canceled.amount_cents, 'payouts_in_transit')
  }
}
