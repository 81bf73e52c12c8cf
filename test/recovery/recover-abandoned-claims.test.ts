// Unknown outcomes settle themselves: the processor acted (or did not) and the response was never recorded; no
// client retries; the recovery worker asks the processor and records exactly what a live request would have.
// With each processor: the simulated one, and Stripe's (its test server) through the SDK.
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { recoverAbandonedClaims, type RecoveryRun } from '../../src/recovery/recover-abandoned-claims.js'
import { recoveries } from '../../src/recovery/registry.js'
import { chargeBody, controllableProcessor, countCharges, useTestApp, type TestAccount } from '../helpers/app.js'
import { recoverNow } from '../helpers/tasks.js'
import { PROCESSORS, useProcessor } from '../helpers/processors.js'

describe.each(PROCESSORS)('with the $name processor', ({ name }) => {
  const under = useProcessor(name)
  const processor = controllableProcessor(under.factory)
  const suite = useTestApp({ processor: processor.factory })

  const recover = (): Promise<RecoveryRun> => recoverNow(suite.context)

  const keyRow = async (accountId: string, key: string) =>
    (await suite.context.sql`select * from idempotency_keys where account_id = ${accountId} and key = ${key}`)[0]
  const ledger = (operationId: string) => under.movementsUnder(suite.context.sql, operationId)

  /** A charge the processor performed and whose answer was lost (503): the key is left bound to its operation. */
  async function lostCharge(user: TestAccount, key: string, body = chargeBody()) {
    processor.loseNextAnswer()
    const response = await user.post('/v1/charges', body, { key })
    expect(response.statusCode).toBe(503)
    expect(response.json().type).toMatch(/\/processor-unavailable$/)
    return (await keyRow(user.id, key))!
  }

  describe('charges', () => {
    it('when the processor charged and the answer was lost and nobody retries, then one run records the charge, its response and the key', async () => {
      const user = await suite.context.newAccount()
      const claim = await lostCharge(user, 'lost-1')
      expect(claim).toMatchObject({ completed_at: null, request: { params: {}, body: chargeBody() } })
      expect(await countCharges(suite.context.sql, user.id)).toBe(0)
      expect(await ledger(claim.operation_id)).toBe(1)
      // The worker was woken for the end of the grace period (60 s here), not left to its next scheduled run.
      const [job] = await suite.context.sql<{ wait: number }[]>`
        select extract(epoch from run_at - now())::int as wait from graphile_worker.jobs where task_identifier =
          'recover_abandoned_claims'`
      expect(job!.wait).toBeGreaterThan(50)
      expect(job!.wait).toBeLessThanOrEqual(60)

      expect(await recover()).toEqual({ settled: 1, released: 0, failed: 0 })

      expect(await countCharges(suite.context.sql, user.id)).toBe(1)
      const settled = await keyRow(user.id, 'lost-1')
      expect(settled).toMatchObject({ response_status: 201, claim_token: null })
      expect(settled!.completed_at).not.toBeNull()
      expect(await ledger(claim.operation_id)).toBe(1)

      const retry = await user.post('/v1/charges', chargeBody(), { key: 'lost-1' })
      expect(retry.statusCode).toBe(201)
      expect(retry.headers['idempotent-replayed']).toBe('true')
      expect(retry.headers.location).toBe(`/v1/charges/${retry.json().id}`)
      // The very bytes a live request returns for this charge.
      expect(retry.rawPayload.equals((await user.get(`/v1/charges/${retry.json().id}`)).rawPayload)).toBe(true)
      expect(await recover()).toEqual({ settled: 0, released: 0, failed: 0 })
      // One call from the route; the worker asked without calling out again (and with Stripe, keyed: the charge,
      // the probe Stripe refused because the key was used, and the replay of the charge).
      expect(processor.calls.filter((call) => call.idempotencyKey === claim.operation_id)).toHaveLength(1)
      if (name === 'stripe') {
        const calls = under.stripe().requests.filter((request) => request.idempotencyKey === claim.operation_id)
        expect(calls.map((call) => [call.method, call.path, call.outcome, call.replayed])).toEqual([
          ['POST', '/v1/payment_intents', 200, false],
          ['POST', '/v1/payment_intents', 400, false],
          ['POST', '/v1/payment_intents', 200, true],
        ])
      }
    })

    it('when the processor never saw the operation, then nothing is recorded, the key is released, and the retry charges once', async () => {
      const user = await suite.context.newAccount()
      const body = chargeBody({ amount_cents: 4301 })
      processor.timeOutNext()
      expect((await user.post('/v1/charges', body, { key: 'unseen-1' })).statusCode).toBe(503)
      const claim = (await keyRow(user.id, 'unseen-1'))!
      expect(await ledger(claim.operation_id)).toBe(0)

      expect(await recover()).toEqual({ settled: 0, released: 1, failed: 0 })

      expect(await keyRow(user.id, 'unseen-1')).toBeUndefined()
      expect(await countCharges(suite.context.sql, user.id)).toBe(0)
      const retry = await user.post('/v1/charges', body, { key: 'unseen-1' })
      expect(retry.statusCode).toBe(201)
      expect(retry.headers['idempotent-replayed']).toBeUndefined()
      expect(await countCharges(suite.context.sql, user.id)).toBe(1)
    })

    it('when a decline’s answer was lost, then it is settled as a decline: the stored 402 is what a live request returns', async () => {
      const user = await suite.context.newAccount()
      await lostCharge(user, 'declined-lost', chargeBody({ source: 'pm_card_chargeDeclined' }))
      expect(await recover()).toMatchObject({ settled: 1 })

      const retry = await user.post('/v1/charges', chargeBody({ source: 'pm_card_chargeDeclined' }), {
        key: 'declined-lost',
      })
      const live = await user.post('/v1/charges', chargeBody({ source: 'pm_card_chargeDeclined' }))
      expect(retry.statusCode).toBe(402)
      expect(retry.headers['idempotent-replayed']).toBe('true')
      expect(retry.headers['content-type']).toBe(live.headers['content-type'])
      const { charge: recoveredCharge, ...recovered } = retry.json()
      const { charge: liveCharge, ...fresh } = live.json()
      expect(recovered).toEqual(fresh)
      expect((await user.get(`/v1/charges/${recoveredCharge}`)).json()).toMatchObject({
        status: 'failed',
        failure_code: 'generic_decline',
      })
      expect(liveCharge).not.toBe(recoveredCharge)
    })

    it('when a recovery run races the client’s own retry, then there is one charge and one stored response', async () => {
      for (let round = 0; round < 5; round++) {
        const user = await suite.context.newAccount()
        const key = `race-retry-${round}`
        const claim = await lostCharge(user, key)
        const [retry] = await Promise.all([user.post('/v1/charges', chargeBody(), { key }), recover()])
        expect([201, 409]).toContain(retry.statusCode)
        await recover()
        expect(await countCharges(suite.context.sql, user.id)).toBe(1)
        expect(await ledger(claim.operation_id)).toBe(1)
        const final = await user.post('/v1/charges', chargeBody(), { key })
        expect(final.statusCode).toBe(201)
        if (retry.statusCode === 201) expect(final.json().id).toBe(retry.json().id)
      }
    })

    it('when two recovery workers race, then exactly one settles each claim', async () => {
      const user = await suite.context.newAccount()
      for (let n = 0; n < 6; n++) await lostCharge(user, `two-workers-${n}`)
      const runs = await Promise.all([recover(), recover()])
      expect(runs[0]!.settled + runs[1]!.settled).toBe(6)
      expect(runs.every((run) => run.failed === 0)).toBe(true)
      expect(await countCharges(suite.context.sql, user.id)).toBe(6)
    })

    it('when the claim is still leased or within its grace period, then the worker leaves it to its client', async () => {
      const user = await suite.context.newAccount()
      await lostCharge(user, 'graceful')
      const waited = await recoverAbandonedClaims(
        suite.context.sql,
        recoveries(suite.context.processor, suite.context.sql),
        { graceSeconds: 3600, leaseSeconds: 30, batchSize: 100 },
        pino({ level: 'silent' }),
      )
      expect(waited).toEqual({ settled: 0, released: 0, failed: 0 })
      expect(await countCharges(suite.context.sql, user.id)).toBe(0)
      // Once the grace period is over, it is settled like any other.
      expect(await recover()).toEqual({ settled: 1, released: 0, failed: 0 })
    })
  })

  describe('refunds', () => {
    async function chargeOf(user: TestAccount, amountCents = 1000): Promise<string> {
      return (await user.post('/v1/charges', chargeBody({ amount_cents: amountCents }))).json().id
    }
    const chargeRow = async (id: string) =>
      (
        await suite.context.sql`select amount_refunded_cents, amount_refund_pending_cents from charges where id = ${id}`
      )[0]

    it('when the processor refunded and the answer was lost, then one run marks the refund succeeded, and the retry replays it', async () => {
      const user = await suite.context.newAccount()
      const chargeId = await chargeOf(user)
      processor.loseNextAnswer()
      const lost = await user.post(`/v1/charges/${chargeId}/refunds`, { amount_cents: 300 }, { key: 'refund-lost' })
      expect(lost.statusCode).toBe(503)
      expect(await chargeRow(chargeId)).toEqual({ amount_refunded_cents: 0, amount_refund_pending_cents: 300 })
      // Meanwhile nobody can refund more than what is left beside the pending 300.
      expect((await user.post(`/v1/charges/${chargeId}/refunds`, { amount_cents: 701 })).statusCode).toBe(422)

      expect(await recover()).toEqual({ settled: 1, released: 0, failed: 0 })

      expect(await chargeRow(chargeId)).toEqual({ amount_refunded_cents: 300, amount_refund_pending_cents: 0 })
      const retry = await user.post(`/v1/charges/${chargeId}/refunds`, { amount_cents: 300 }, { key: 'refund-lost' })
      expect(retry.statusCode).toBe(201)
      expect(retry.headers['idempotent-replayed']).toBe('true')
      expect(retry.json()).toMatchObject({ object: 'refund', amount_cents: 300, status: 'succeeded' })
      expect(retry.rawPayload.equals((await user.get(`/v1/refunds/${retry.json().id}`)).rawPayload)).toBe(true)
    })

    it('when the processor never saw the refund, then the reservation is given back, the key released, and the retry refunds once', async () => {
      const user = await suite.context.newAccount()
      const chargeId = await chargeOf(user)
      processor.timeOutNext()
      expect(
        (await user.post(`/v1/charges/${chargeId}/refunds`, { amount_cents: 400 }, { key: 'refund-unseen' }))
          .statusCode,
      ).toBe(503)
      expect(await chargeRow(chargeId)).toEqual({ amount_refunded_cents: 0, amount_refund_pending_cents: 400 })

      expect(await recover()).toEqual({ settled: 0, released: 1, failed: 0 })

      expect(await chargeRow(chargeId)).toEqual({ amount_refunded_cents: 0, amount_refund_pending_cents: 0 })
      const [pending] = await suite.context
        .sql`select count(*)::int as count from refunds where charge_id = ${chargeId}`
      expect(pending!.count).toBe(0)
      const retry = await user.post(`/v1/charges/${chargeId}/refunds`, { amount_cents: 400 }, { key: 'refund-unseen' })
      expect(retry.statusCode).toBe(201)
      expect(await chargeRow(chargeId)).toEqual({ amount_refunded_cents: 400, amount_refund_pending_cents: 0 })
    })

    it('when the client retries the lost refund itself, then the same pending refund is completed, not a second one', async () => {
      const user = await suite.context.newAccount()
      const chargeId = await chargeOf(user)
      processor.loseNextAnswer()
      expect(
        (await user.post(`/v1/charges/${chargeId}/refunds`, { amount_cents: 250 }, { key: 'refund-retried' }))
          .statusCode,
      ).toBe(503)
      const retry = await user.post(`/v1/charges/${chargeId}/refunds`, { amount_cents: 250 }, { key: 'refund-retried' })
      expect(retry.statusCode).toBe(201)
      expect(retry.headers['idempotent-replayed']).toBeUndefined()
      expect(await chargeRow(chargeId)).toEqual({ amount_refunded_cents: 250, amount_refund_pending_cents: 0 })
      const refunds = await suite.context.sql`select status from refunds where charge_id = ${chargeId}`
      expect(refunds).toEqual([{ status: 'succeeded' }])
    })
  })

  describe('outcomes that cannot be recorded', () => {
    it('when the database refuses what the processor did, then it is logged with the key and operation id, counted, and retried later', async () => {
      const user = await suite.context.newAccount()
      const claim = await lostCharge(user, 'refused')
      await suite.context.sql`create or replace function refuse_charge() returns trigger language plpgsql as $$
        begin raise exception 'refused for the test'; end $$`
      await suite.context.sql.unsafe(`create trigger refuse_for_account before insert on charges for each row
        when (new.account_id = '${user.id}') execute function refuse_charge()`)
      const lines: string[] = []
      const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) })
      const settings = { graceSeconds: 0, leaseSeconds: 30, batchSize: 100 }
      try {
        expect(
          await recoverAbandonedClaims(
            suite.context.sql,
            recoveries(suite.context.processor, suite.context.sql),
            settings,
            log,
          ),
        ).toEqual({ settled: 0, released: 0, failed: 1 })
      } finally {
        await suite.context.sql`drop trigger refuse_for_account on charges`
      }
      const logged = lines.map((line) => JSON.parse(line)).find((entry) => entry.level === 50)
      expect(logged).toMatchObject({ idempotency_key: 'refused', operation_id: claim.operation_id })
      expect(await keyRow(user.id, 'refused')).toMatchObject({ recovery_attempts: 1, completed_at: null })

      // Backoff: with a grace of 1 s, the next attempt waits 2 s after the failure...
      const soon = await recoverAbandonedClaims(
        suite.context.sql,
        recoveries(suite.context.processor, suite.context.sql),
        { ...settings, graceSeconds: 1 },
        log,
      )
      expect(soon).toEqual({ settled: 0, released: 0, failed: 0 })
      // ...and once that has passed, it settles.
      await suite.context
        .sql`update idempotency_keys set locked_until = now() - interval '10 seconds' where account_id = ${user.id}
          and key = 'refused'`
      expect(
        await recoverAbandonedClaims(
          suite.context.sql,
          recoveries(suite.context.processor, suite.context.sql),
          { ...settings, graceSeconds: 1 },
          log,
        ),
      ).toEqual({ settled: 1, released: 0, failed: 0 })
      expect(await countCharges(suite.context.sql, user.id)).toBe(1)
    })
  })
})
