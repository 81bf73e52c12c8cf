// Every endpoint whose unknown outcomes the service settles by itself. A fork adds its own Recovery here; the
// idempotency plugin then keeps the requests of that endpoint, and the recovery worker settles them.
import { chargeRecovery, settlementRecovery } from '../charges/recovery.js'
import type { Sql } from '../db/connect.js'
import type { PaymentProcessor } from '../processor/processor.js'
import { refundRecovery } from '../refunds/recovery.js'
import type { Recovery } from '../idempotency/recovery.js'

export function recoveries(processor: PaymentProcessor, sql: Sql, settings = { authorizationExpiresDays: 7 }): Recovery[] {
  return [
    chargeRecovery(processor, settings),
    settlementRecovery(processor, sql, 'capture'),
    settlementRecovery(processor, sql, 'void'),
    refundRecovery(processor, sql),
  ]
}
