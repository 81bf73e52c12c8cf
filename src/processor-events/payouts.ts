// A payout told by the processor, applied to the ledger (docs/ledger.md, "Payouts"). A payout belongs to the processor
// account as a whole; what it carries of each account's money (its charges, refunds, disputes, found in the books by
// their charge) is that account's share: posted out of its balance into transit, then to the bank when the payout
// arrives, or back into the balance if it fails. Each leg posts once, whatever order the news comes in; the
// transactions carried are marked with the payout. Each account's share is the API's payout
// (src/payouts/repository.ts), told in its events: created when the books learn what it carries, then paid or failed.
// What the books cannot match is left for the payout report (src/processor-events/payout-report.ts), which names every
// difference: never fixed here.
import type { Transaction } from '../db/connect.js'
import { insertEvent } from '../events/events.js'
import { laterStatus, lockPayoutShare, savePayoutShare, toPayout } from '../payouts/repository.js'
import { type CarriedInBooks, findCarried, markPaidOut, postedFor } from '../ledger/repository.js'
import { postPayout, postPayoutArrival, postPayoutFailure } from '../ledger/postings.js'
import type { PayoutState } from '../processor/later-outcomes.js'
import { payoutsApplied } from '../observability/metrics.js'
import type { Applied, EventOrigin } from './applied.js'

/**
 * A connected account's payout (Stripe Connect: `processorAccount`) carries only the money of the account linked to
 * it: what it names of any other account's is not that account's share (its metadata is the connected account's to
 * write), and is left to the payout report.
 */
export async function applyPayout(tx: Transaction, payout: PayoutState, origin: EventOrigin): Promise<Applied> {
  const { processorAccount, linkedAccount: owner } = origin
  if (!payout.carried)
    return {
      status: 'ignored',
      note: `payout ${payout.reference} is ${payout.status}; what it carries is not told yet (a later event will)`,
    }
  const carried = payout.carried.filter((each) => each.type !== 'other')
  const found = await findCarried(tx, carried)
  // Ours (it names a charge, or a payout whose failure the books await) but not in the books yet: its news may
  // still be on its way.
  const missing = carried.filter((each, n) => found[n]?.awaited || (each.chargeId && found[n]?.posted.length === 0))
  if (missing.length > 0) {
    const named = missing.map((each) => `${each.type} ${each.reference}`).join(', ')
    return { status: 'waiting', note: `payout ${payout.reference} carries ${named}, not in the books yet` }
  }
  if (processorAccount !== null && owner === undefined)
    return { status: 'ignored', note: `payout ${payout.reference}: ${processorAccount} is linked to no account` }
  for (const [accountId, share] of sharesByAccount(found)) {
    if (owner !== undefined && accountId !== owner) continue
    const money = { account_id: accountId, currency: payout.currency }
    // An account whose carried money nets to nothing has no leg to post (the database refuses an empty entry).
    if (share.netCents !== 0) {
      const posted = await postedFor(tx, accountId, payout.reference)
      const failed = posted.has(`payout_failure:${payout.reference}`)
      const arrived = posted.has(`payout_arrival:${payout.reference}`)
      await postPayout(tx, money, payout.reference, share.netCents)
      // A payout told as paid after it was told as failed (events reordered) arrives no more.
      if (payout.status === 'paid' && !failed && !arrived)
        await postPayoutArrival(tx, money, payout.reference, share.netCents)
      if (payout.status === 'failed' && !failed)
        await postPayoutFailure(tx, money, payout.reference, share.netCents, arrived ? 'bank' : 'payouts_in_transit')
    }
    await markPaidOut(tx, accountId, share.ids, payout.reference)
    await tellShare(tx, payout, accountId, share.netCents)
  }
  return { status: 'applied', afterCommit: [() => payoutsApplied.inc({ status: payout.status })] }
}

/** The account's payout, written or moved forward, and its events: created once, then paid or failed once each. */
async function tellShare(tx: Transaction, payout: PayoutState, accountId: string, amountCents: number) {
  const before = await lockPayoutShare(tx, accountId, payout.reference)
  const status = before ? laterStatus(before.status, payout.status) : payout.status
  const row = await savePayoutShare(tx, {
    accountId,
    id: payout.reference,
    amountCents,
    currency: payout.currency,
    status,
    arrivalDate: payout.arrivalDate === undefined ? undefined : new Date(payout.arrivalDate),
    failureCode: status === 'failed' ? payout.failureCode : undefined,
  })
  const object = await toPayout(tx, row)
  if (!before) await insertEvent(tx, accountId, 'payout.created', { object })
  if (status !== (before?.status ?? 'in_transit'))
    await insertEvent(tx, accountId, status === 'paid' ? 'payout.paid' : 'payout.failed', { object })
}

interface Share {
  netCents: number
  ids: string[]
}

/** Per account, in a stable order (so two payouts lock rows in one order): the net of its carried transactions. */
function sharesByAccount(found: CarriedInBooks[]): Map<string, Share> {
  const shares = new Map<string, Share>()
  for (const posted of found.flatMap((each) => each.posted)) {
    const share = shares.get(posted.accountId) ?? { netCents: 0, ids: [] }
    share.netCents += posted.netCents
    share.ids.push(posted.id)
    shares.set(posted.accountId, share)
  }
  return new Map([...shares].sort(([a], [b]) => a.localeCompare(b)))
}
