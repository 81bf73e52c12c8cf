// A worker task that moves money runs the same keyed operation as a request (src/idempotency/keyed-task.ts): here a
// renewal that charges a subscription's period under the key `${subscription}:${period}`, through the processor
// and the charges' own Recovery, as a fork's task would. Asserted: one charge and one processor call per key, however
// the runs meet; a lost answer settled by the recovery worker; a failure before the call frees the key.
import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { chargeCall, chargeIdOf } from '../../src/charges/calls.js'
import { recordCharge } from '../../src/charges/record-charge.js'
import { chargeRecovery } from '../../src/charges/recovery.js'
import { KeyedTasks } from '../../src/idempotency/keyed-task.js'
import { chargeBody, controllableProcessor, countCharges, useTestApp } from '../helpers/app.js'
import { recoverNow } from '../helpers/tasks.js'

const processor = controllableProcessor()
const suite = useTestApp({ processor: processor.factory })
const log = pino({ level: 'silent' })
const timing = { ttlSeconds: 86_400, leaseSeconds: 30, recoveryGraceSeconds: 0 }

/** The renewal of one period: charge it, and record the charge with the key's completion. */
function renew(keyed: KeyedTasks, accountId: string, period: number, options: { failBeforeCall?: boolean } = {}) {
  const { processor: charging, chargeSettings } = suite.context
  const body = chargeBody({ description: `sub_test period ${period}` })
  const recovery = chargeRecovery(charging, chargeSettings)
  const account = { id: accountId, processorAccount: null }
  const input = { params: {}, body }
  const task = {
    accountId,
    processorAccount: null,
    task: 'renew_test',
    key: `sub_test:${period}`,
    input,
    recovery,
    log,
  }
  return keyed.run(task, async (operation) => {
    if (options.failBeforeCall) throw new Error('test: the task failed before calling out')
    const outcome = await operation.callOut((key) => charging.charge(chargeCall(account, body, key)))
    return operation.complete((tx) =>
      recordCharge(tx, chargeIdOf(operation.id), account, body, outcome, chargeSettings.pricing),
    )
  })
}

const keyedTasks = () => new KeyedTasks(suite.context.sql, timing)

describe('a keyed worker task', () => {
  it('when the same period is renewed twice, then the second run replays the first and the money moves once', async () => {
    const user = await suite.context.newAccount()
    const keyed = keyedTasks()
    const first = await renew(keyed, user.id, 1)
    expect(first).toMatchObject({
      outcome: 'completed',
      status: 201,
      body: { status: 'succeeded', amount_cents: 2500 },
    })
    const again = await renew(keyed, user.id, 1)
    expect(again).toEqual({ ...first, outcome: 'replayed' })
    expect(await countCharges(suite.context.sql, user.id)).toBe(1)
    // Another period is another operation; another account's same key another again.
    expect(await renew(keyed, user.id, 2)).toMatchObject({ outcome: 'completed' })
    const other = await suite.context.newAccount()
    expect(await renew(keyed, other.id, 1)).toMatchObject({ outcome: 'completed' })
    expect(await countCharges(suite.context.sql, user.id)).toBe(2)
    expect(await countCharges(suite.context.sql, other.id)).toBe(1)
    const [key] = await suite.context.sql`
      select endpoint from idempotency_keys where account_id = ${user.id} and key = 'sub_test:1'`
    expect(key).toEqual({ endpoint: 'task renew_test' })
  })

  it('when two runs renew the same period at the same instant, then one charges and the other replays or is told it is in flight', async () => {
    const user = await suite.context.newAccount()
    const before = processor.calls.length
    const open = processor.holdNext()
    const runs = [renew(keyedTasks(), user.id, 1), renew(keyedTasks(), user.id, 1)]
    const second = await Promise.race(runs)
    open()
    const results = await Promise.all(runs)
    expect(second).toEqual({ outcome: 'in-flight' })
    expect(results.map((result) => result.outcome).sort()).toEqual(['completed', 'in-flight'])
    expect(processor.calls.length - before).toBe(1)
    expect(await countCharges(suite.context.sql, user.id)).toBe(1)
    expect(await renew(keyedTasks(), user.id, 1)).toMatchObject({ outcome: 'replayed', status: 201 })
  })

  it('when the answer of the call is lost, then the recovery worker records the charge once and the next run replays it', async () => {
    const user = await suite.context.newAccount()
    processor.loseNextAnswer()
    await expect(renew(keyedTasks(), user.id, 1)).rejects.toThrow('the answer was lost')
    expect(await countCharges(suite.context.sql, user.id)).toBe(0)
    const [left] = await suite.context.sql`
      select completed_at, claim_token, request->>'recovery' as recovery from idempotency_keys
      where account_id = ${user.id} and key = 'sub_test:1'`
    // Bound to its operation, neither forgotten nor completed, and named for the Recovery that settles it.
    expect(left).toMatchObject({ completed_at: null, recovery: 'charge' })
    expect(left!.claim_token).not.toBeNull()

    const { sql } = suite.context
    const run = await recoverNow(suite.context)
    expect(run).toMatchObject({ settled: 1, failed: 0 })
    expect(await countCharges(sql, user.id)).toBe(1)
    const calls = processor.calls.length
    const next = await renew(keyedTasks(), user.id, 1)
    expect(next).toMatchObject({ outcome: 'replayed', status: 201, body: { status: 'succeeded' } })
    expect(processor.calls.length).toBe(calls)
    expect(await countCharges(sql, user.id)).toBe(1)
  })

  it('when a run fails before it calls out, then the key is free and the next run charges', async () => {
    const user = await suite.context.newAccount()
    await expect(renew(keyedTasks(), user.id, 1, { failBeforeCall: true })).rejects.toThrow('before calling out')
    const keys = await suite.context.sql`select 1 from idempotency_keys where account_id = ${user.id}`
    expect(keys).toHaveLength(0)
    expect(await renew(keyedTasks(), user.id, 1)).toMatchObject({ outcome: 'completed' })
    expect(await countCharges(suite.context.sql, user.id)).toBe(1)
  })

  it('when a key derived for one input is used with another, then the run fails naming the derivation, and nothing moves', async () => {
    const user = await suite.context.newAccount()
    const keyed = keyedTasks()
    await renew(keyed, user.id, 1)
    const calls = processor.calls.length
    const task = {
      accountId: user.id,
      task: 'renew_test',
      key: 'sub_test:1',
      processorAccount: null,
      input: { params: {}, body: chargeBody({ amount_cents: 9900 }) },
      recovery: undefined,
      log,
    }
    await expect(keyed.run(task, () => Promise.reject(new Error('never run')))).rejects.toThrow(
      'task renew_test: key sub_test:1 was first used for another input; derive one key per operation',
    )
    expect(processor.calls.length).toBe(calls)
  })
})
