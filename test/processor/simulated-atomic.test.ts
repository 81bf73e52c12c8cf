// The simulated processor records an operation and what it changes (a capture and the payment's captured amount; a
// void and the payment's cancellation) together, as a real processor does. Found by the fault run: a connection cut
// between the two left a capture recorded on a payment that still said requires_capture, so a payout left the
// captured money behind, and the retry (answered from the recorded operation) never wrote the payment's state.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chargeIdOf } from '../../src/charges/calls.js'
import { connect, type Sql } from '../../src/db/connect.js'
import type { ChargeOutcome } from '../../src/processor/processor.js'
import { createSimulatedProcessor } from '../../src/processor/simulated.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

const pricing = { percentBasisPoints: 290, fixedCents: 30, disputeFeeCents: 1500, availableAfterDays: 0 }

describe('the simulated processor, when the statement after an operation fails', () => {
  let database: TestDatabase
  // Its statements give up after 300 ms: a row held by another transaction makes the second statement fail.
  let impatient: Sql

  beforeAll(async () => {
    database = await createTestDatabase()
    impatient = connect(database.url, { statementTimeoutMs: 300 })
  })
  afterAll(async () => {
    await impatient.end({ timeout: 5 })
    await database.drop()
  })

  it.each(['capture', 'void'] as const)(
    'then the %s is not recorded without it, and its retry does both',
    async (kind) => {
      const processor = createSimulatedProcessor({ sql: impatient })
      const key = randomUUID()
      const authorized = (await processor.authorize({
        amountCents: 4000,
        currency: 'usd',
        source: 'pm_card_visa',
        accountId: 'acct_atomic',
        processorAccount: null,
        idempotencyKey: key,
        chargeId: chargeIdOf(key),
      })) as Extract<ChargeOutcome, { status: 'succeeded' }>
      const settling = {
        accountId: 'acct_atomic',
        processorAccount: null,
        chargeReference: authorized.processorReference,
        idempotencyKey: `${key}:c`,
      }
      const settle = () =>
        kind === 'capture' ? processor.capture({ ...settling, amountCents: 4000 }) : processor.void(settling)

      // Another transaction holds the payment's row: the payment's new state cannot be written in time.
      await database.sql.begin(async (tx) => {
        await tx`select 1 from simulated_processor.operations where idempotency_key = ${key} for update`
        await expect(settle()).rejects.toThrow()
      })
      const recorded =
        await database.sql`select 1 from simulated_processor.operations where idempotency_key = ${`${key}:c`}`
      expect(recorded.length).toBe(0)

      await settle()
      const [payment] = await database.sql<{ status: string; captured: number }[]>`
      select state->>'status' as status, (state->>'amountCapturedCents')::int as captured
      from simulated_processor.operations where idempotency_key = ${key}`
      expect(payment).toEqual(
        kind === 'capture' ? { status: 'succeeded', captured: 4000 } : { status: 'canceled', captured: 0 },
      )
      // What a payout carries comes from the payment's state: the capture's money, once, or nothing of a void.
      const payOut = () => processor.controls.payOut(pricing, { currency: 'usd', availableBy: new Date() })
      if (kind === 'void') return await expect(payOut()).rejects.toThrow(/nothing to pay out/)
      const [payout] = (await payOut()).changes
      expect(payout).toMatchObject({
        amountCents: 4000 - 146,
        carried: [{ type: 'charge', amountCents: 4000, feeCents: 146 }],
      })
    },
  )
})
