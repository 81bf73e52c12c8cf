// The interleavings a model checker found (test/model/idempotency.pml), each played against the real code and
// PostgreSQL: a row lock held by a second connection stands for a slow pool or a lock wait, a held processor
// answer for a slow processor, a held lookup for a recovery worker that stalls. Whatever the order, the processor
// acts once per key and body, and the books equal what it did once the worker has run. With each processor: the
// simulated one, and Stripe's test server through the SDK.
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import type { Sql } from '../../src/db/connect.js'
import { recoverAbandonedClaims } from '../../src/recovery/recover-abandoned-claims.js'
import { recoveries } from '../../src/recovery/registry.js'
import { chargeBody, controllableProcessor, countCharges, useTestApp, type TestAccount } from '../helpers/app.js'
import { PROCESSORS, useProcessor } from '../helpers/processors.js'
import { until } from '../helpers/system.js'

// The deadline plugin logs this when a handler ends after its client was answered: the moment a late request
// has let go of everything it held.
const LATE_END = 'request failed after its deadline had been answered'
const lateEnds: string[] = []
const log = pino(
  { level: 'warn' },
  new Writable({
    write: (chunk, _encoding, done) => {
      lateEnds.push(...lineIf(String(chunk)))
      done()
    },
  }),
)
const lineIf = (line: string) => (JSON.parse(line).msg === LATE_END ? [line] : [])
// The smallest lease the configuration accepts for a 1 s deadline (lease >= deadline).
describe.each(PROCESSORS)('with the $name processor', ({ name }) => {
  const under = useProcessor(name)
  const processor = controllableProcessor(under.factory)
  const suite = useTestApp({
    processor: processor.factory,
    config: { REQUEST_TIMEOUT_MS: 1000, IDEMPOTENCY_LEASE_SECONDS: 1 },
    log,
  })
  const processorLedger = (sql: Sql, accountId: string) => under.ledgerOf(sql, accountId)

  const recover = (leaseSeconds = 30) =>
    recoverAbandonedClaims(
      suite.context.sql,
      recoveries(suite.context.processor, suite.context.sql),
      { graceSeconds: 0, leaseSeconds, batchSize: 100 },
      pino({ level: 'silent' }),
    )

  const keyRow = async (accountId: string, key: string) =>
    (
      await suite.context.sql<{ operation_id: string; claim_token: string | null; expires_at: Date }[]>`
      select operation_id, claim_token, expires_at from idempotency_keys where account_id = ${accountId} and key =
        ${key}`
    )[0]

  const chargeOf = async (accountId: string) =>
    (
      await suite.context.sql<{ id: string; amount_refunded_cents: number; amount_refund_pending_cents: number }[]>`
      select id, amount_refunded_cents, amount_refund_pending_cents from charges where account_id = ${accountId}`
    )[0]!

  /** Holds a row lock from a connection of its own until `release` is called, as a slow transaction would. */
  async function holdLock(sql: Sql, lock: (tx: Sql) => Promise<unknown>): Promise<{ release: () => Promise<void> }> {
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let locked!: () => void
    const isLocked = new Promise<void>((resolve) => (locked = resolve))
    const holding = sql.begin(async (tx) => {
      await lock(tx as unknown as Sql)
      locked()
      await released
    })
    await isLocked
    return {
      release: async () => {
        release()
        return await holding
      },
    }
  }

  /** Backends of this database waiting for a lock. */
  const lockWaiters = async (sql: Sql) =>
    (
      await sql<
        { n: number }[]
      >`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`
    )[0]!.n

  /** A charge whose answer the processor lost after charging (503): returns the operation id its key is bound to. */
  async function lostCharge(user: TestAccount, key: string): Promise<string> {
    processor.loseNextAnswer()
    expect((await user.post('/v1/charges', chargeBody(), { key })).statusCode).toBe(503)
    return (await keyRow(user.id, key))!.operation_id
  }

  /** Makes a key look a day and a second old, past its TTL, as PostgreSQL's clock would after a long outage. */
  const ageOneDay = (operationId: string) =>
    suite.context
      .sql`update idempotency_keys set expires_at = now() - interval '1 second', created_at = now() - interval
        '1 day 1 second' where operation_id = ${operationId}`

  async function capturedCharge(user: TestAccount, amount = 1000): Promise<string> {
    const response = await user.post('/v1/charges', chargeBody({ amount_cents: amount }))
    expect(response.statusCode).toBe(201)
    return response.json().id
  }

  describe('a takeover that fails before its own call', () => {
    it('when the retry that took over a lost charge runs out of time before calling out, then the key stays bound and the processor charges once', async () => {
      const user = await suite.context.newAccount()
      const operationId = await lostCharge(user, 'lost-then-late')

      // The retry's takeover waits on the key's row lock past its 1 s deadline (a slow pool, a lock wait).
      const lock = await holdLock(
        suite.context.sql,
        (tx) => tx`select from idempotency_keys where account_id = ${user.id} and key = 'lost-then-late' for update`,
      )
      const lateEndsBefore = lateEnds.length
      const late = await user.post('/v1/charges', chargeBody(), { key: 'lost-then-late' })
      // 503 over a socket; inject leaves the body "incomplete", so 408.
      expect(late.statusCode).toBeGreaterThanOrEqual(408)
      await lock.release()
      await until(async () => lateEnds.length > lateEndsBefore)

      // It took over an operation that may be downstream, so it kept the key and its operation id.
      expect((await keyRow(user.id, 'lost-then-late'))?.operation_id).toBe(operationId)
      const retry = await user.post('/v1/charges', chargeBody(), { key: 'lost-then-late' })
      expect(retry.statusCode).toBe(201)
      expect(await countCharges(suite.context.sql, user.id)).toBe(1)
      expect((await processorLedger(suite.context.sql, user.id)).charges).toBe(1)
    })

    it('when the retry that took over a lost refund runs out of time before calling out, then the pending refund stays and the processor refunds once', async () => {
      const user = await suite.context.newAccount()
      const chargeId = await capturedCharge(user)
      processor.loseNextAnswer()
      expect((await user.post(`/v1/charges/${chargeId}/refunds`, {}, { key: 'refund-late' })).statusCode).toBe(503)

      // The retry takes the key over, then waits on the charge's row lock past its deadline.
      const lock = await holdLock(suite.context.sql, (tx) => tx`select from charges where id = ${chargeId} for update`)
      const lateEndsBefore = lateEnds.length
      await user.post(`/v1/charges/${chargeId}/refunds`, {}, { key: 'refund-late' })
      await lock.release()
      await until(async () => lateEnds.length > lateEndsBefore)

      expect(await chargeOf(user.id)).toMatchObject({ amount_refunded_cents: 0, amount_refund_pending_cents: 1000 })
      const retry = await user.post(`/v1/charges/${chargeId}/refunds`, {}, { key: 'refund-late' })
      expect(retry.statusCode).toBe(201)
      expect(await chargeOf(user.id)).toMatchObject({ amount_refunded_cents: 1000, amount_refund_pending_cents: 0 })
      expect(await processorLedger(suite.context.sql, user.id)).toMatchObject({ refunds: 1, refunded: 1000 })
    })
  })

  describe('give-backs are fenced by the claim', () => {
    it('when the recovery worker’s lookup stalls past its lease while a retry refunds, then the worker gives nothing back and the books equal the processor', async () => {
      const user = await suite.context.newAccount()
      const chargeId = await capturedCharge(user)
      processor.timeOutNext()
      expect((await user.post(`/v1/charges/${chargeId}/refunds`, {}, { key: 'stalled-worker' })).statusCode).toBe(503)
      const { operation_id: operationId } = (await keyRow(user.id, 'stalled-worker'))!

      // The worker takes the claim over and asks the processor, which has not seen it; the answer is held.
      const lookup = processor.holdNextLookupAnswer()
      const stalledRun = recover(1)
      await lookup.reached
      await until(
        async () =>
          (
            await suite.context
              .sql`select 1 from idempotency_keys where operation_id = ${operationId} and locked_until <= now()`
          ).length === 1,
      )

      // Its lease has run out: the client's retry takes the key over, finds the pending refund and calls out.
      const callsBefore = processor.calls.length
      const openCall = processor.holdNext()
      const retry = user.post(`/v1/charges/${chargeId}/refunds`, {}, { key: 'stalled-worker' })
      await until(async () => processor.calls.length > callsBefore)
      expect(processor.calls.at(-1)).toEqual({ operation: 'refund', idempotencyKey: operationId })

      // The worker's stale "never saw it" arrives now.
      lookup.open()
      expect(await stalledRun).toEqual({ settled: 0, released: 0, failed: 0 })
      openCall()
      await retry
      await recover()

      expect(await chargeOf(user.id)).toMatchObject({ amount_refunded_cents: 1000, amount_refund_pending_cents: 0 })
      expect(await processorLedger(suite.context.sql, user.id)).toMatchObject({ refunds: 1, refunded: 1000 })
      const replay = await user.post(`/v1/charges/${chargeId}/refunds`, {}, { key: 'stalled-worker' })
      expect(replay.statusCode).toBe(201)
      expect((await user.post(`/v1/charges/${chargeId}/refunds`, {})).statusCode).toBe(422)
    })

    it('when a request loses its lease waiting for the charge’s lock and its successor refunds, then the late request gives nothing back', async () => {
      const user = await suite.context.newAccount()
      const chargeId = await capturedCharge(user)
      const lock = await holdLock(suite.context.sql, (tx) => tx`select from charges where id = ${chargeId} for update`)

      // The first request claims the key, then waits on the charge's row lock until its 1 s lease has ended.
      const lateEndsBefore = lateEnds.length
      const first = user.post(`/v1/charges/${chargeId}/refunds`, {}, { key: 'lock-wait' })
      await until(async () => (await lockWaiters(suite.context.sql)) === 1)
      await until(
        async () =>
          (
            await suite.context
              .sql`select 1 from idempotency_keys where account_id = ${user.id} and key = 'lock-wait' and locked_until
                <= now()`
          ).length === 1,
      )
      // Its retry takes the key over and queues on the same lock.
      const callsBefore = processor.calls.length
      const openCall = processor.holdNext()
      const retry = user.post(`/v1/charges/${chargeId}/refunds`, {}, { key: 'lock-wait' })
      await until(async () => (await lockWaiters(suite.context.sql)) === 2)

      await lock.release()
      // The retry reserves and calls out (held there); the first request, past its deadline, ends.
      await until(async () => processor.calls.length > callsBefore)
      await until(async () => lateEnds.length > lateEndsBefore)
      await first
      openCall()
      await retry
      await recover()

      expect(await chargeOf(user.id)).toMatchObject({ amount_refunded_cents: 1000, amount_refund_pending_cents: 0 })
      expect(await processorLedger(suite.context.sql, user.id)).toMatchObject({ refunds: 1, refunded: 1000 })
      expect((await user.post(`/v1/charges/${chargeId}/refunds`, {}, { key: 'lock-wait' })).statusCode).toBe(201)
    })
  })

  describe('an unsettled key never expires', () => {
    it('when a lost charge’s key has expired, then another body is refused and the same body settles the first operation', async () => {
      const user = await suite.context.newAccount()
      const operationId = await lostCharge(user, 'expired-unsettled')
      await ageOneDay(operationId)

      expect(
        (await user.post('/v1/charges', chargeBody({ amount_cents: 77 }), { key: 'expired-unsettled' })).statusCode,
      ).toBe(422)
      if (name === 'stripe') {
        // Stripe keeps keys for 24 hours: a day-old operation is not sent again (Stripe might charge anew); the
        // worker settles it by listing what Stripe did since, and the retry after that replays.
        const callsBefore = processor.calls.length
        const refused = await user.post('/v1/charges', chargeBody(), { key: 'expired-unsettled' })
        expect(refused.statusCode).toBe(503)
        expect(processor.calls.length).toBe(callsBefore)
        expect(await recover()).toMatchObject({ settled: 1 })
      }
      const retry = await user.post('/v1/charges', chargeBody(), { key: 'expired-unsettled' })

      expect(retry.statusCode).toBe(201)
      expect(await countCharges(suite.context.sql, user.id)).toBe(1)
      expect((await processorLedger(suite.context.sql, user.id)).charges).toBe(1)
      // Settled after its TTL, it is kept a full TTL from now, so the client's next retry replays it.
      const settled = (await keyRow(user.id, 'expired-unsettled'))!
      expect(settled.operation_id).toBe(operationId)
      expect(settled.expires_at.getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000)
      expect(
        (await user.post('/v1/charges', chargeBody(), { key: 'expired-unsettled' })).headers['idempotent-replayed'],
      ).toBe('true')
    })

    it('when the recovery worker settles a key after its TTL, then the client’s retry replays it instead of charging again', async () => {
      const user = await suite.context.newAccount()
      await ageOneDay(await lostCharge(user, 'settled-late'))

      expect(await recover()).toMatchObject({ settled: 1 })
      const retry = await user.post('/v1/charges', chargeBody(), { key: 'settled-late' })

      expect(retry.statusCode).toBe(201)
      expect(retry.headers['idempotent-replayed']).toBe('true')
      expect(await countCharges(suite.context.sql, user.id)).toBe(1)
      expect((await processorLedger(suite.context.sql, user.id)).charges).toBe(1)
    })
  })
})
