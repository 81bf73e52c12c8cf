// The reconciliation's two graphile-worker tasks: reading the processor's events (RECONCILE_SCHEDULE), and holding
// the books against its payments, refunds and payouts (COMPARE_SCHEDULE, after reading the events, so that only what
// no event explains is reported).
import type { Logger } from 'pino'
import type { Sql } from '../db/connect.js'
import type { LaterOutcomes } from '../processor/later-outcomes.js'
import type { LaterSettings } from './apply.js'
import { compareWithProcessor } from './compare.js'
import { comparePayouts } from './payout-report.js'
import { pullEvents } from './reconcile.js'

export const RECONCILE_TASK = 'reconcile_processor_events'
export const COMPARE_TASK = 'compare_books_with_processor'

export async function reconcileTask(
  sql: Sql,
  later: LaterOutcomes,
  settings: LaterSettings,
  log: Logger,
): Promise<void> {
  const pulled = await pullEvents(sql, later, settings, log)
  if (pulled.fresh || pulled.appliedFromWaiting)
    log.info({ task: RECONCILE_TASK, ...pulled }, `read ${later.name}'s events: ${pulled.fresh} not received before`)
}

export async function compareTask(sql: Sql, later: LaterOutcomes, settings: LaterSettings, log: Logger): Promise<void> {
  await pullEvents(sql, later, settings, log)
  const payouts = await comparePayouts(sql, log)
  const compared = await compareWithProcessor(sql, later, log)
  const level = compared.open ? 'warn' : 'info'
  log[level](
    { task: COMPARE_TASK, ...compared, payouts },
    `compared the books with ${later.name}: ${compared.open} disagreement(s) open`,
  )
}
