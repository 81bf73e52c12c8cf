// Voids authorizations nobody captured by their authorization_expires_at, and marks the charges expired. The
// processor gets a durable derived key, void:<charge>, so a job redelivered after a crash voids once; and the
// charge's pending operation, with a lease, keeps a capture and this void from both happening.
//   1. claim: the charge's pending operation becomes this void (or stays it, if a crashed run left it)
//   2. call out: void at the processor
//   3. record: the charge expired, and its charge.expired event, in one transaction
import type { Logger } from 'pino'
import type { Sql } from '../db/connect.js'
import type { PaymentProcessor } from '../processor/processor.js'
import { voidCall } from './calls.js'
import { claimExpiredAuthorizations, type ExpiryScope } from './repository.js'
import { recordVoid } from './settle.js'

export const EXPIRE_TASK = 'expire_authorizations'

export async function expireAuthorizations(
  sql: Sql,
  processor: PaymentProcessor,
  options: { batchSize: number; leaseSeconds: number } & ExpiryScope,
  log: Logger,
): Promise<number> {
  const claimed = await claimExpiredAuthorizations(sql, options)
  let expired = 0
  for (const charge of claimed) {
    try {
      // Claimed above with its derived key as the pending operation.
      const outcome = await processor.void(voidCall(charge, charge.pending_operation_id ?? ''))
      await sql.begin((tx) => recordVoid(tx, charge, 'expired', outcome))
      expired++
    } catch (error) {
      // The lease runs out and the next run tries again, with the same key.
      log.error({ err: error, charge: charge.id }, 'could not expire an authorization; it will be tried again')
    }
  }
  return expired
}
