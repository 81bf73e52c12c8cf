import { describe, expect, it } from 'vitest'
import { migrate } from '../../src/db/migrate.js'
import { settlementBacklog } from '../../src/idempotency/abandoned-claims.js'
import type { Recovery } from '../../src/idempotency/recovery.js'
import { recoveries, requireRecoveries } from '../../src/recovery/registry.js'
import { chargeBody, controllableProcessor, countCharges, useTestApp } from '../helpers/app.js'
import { recoverNow } from '../helpers/tasks.js'

const processor = controllableProcessor()
const suite = useTestApp({ processor: processor.factory })
/** One run of the recovery worker with the service's Recoveries, every claim due at once. */
const recover = () => recoverNow(suite.context)
const named = (name: string): Recovery => ({
  name,
  lookup: async () => undefined,
  record: async () => ({ status: 200, body: {} }),
})

describe('the Recoveries', () => {
  it('when a route names a Recovery the worker does not have, or two share a name, then the API refuses to start', () => {
    const worker = recoveries(suite.context.processor, suite.context.sql)
    // The service's own, and whatever a fork adds beside them.
    expect(worker.map((recovery) => recovery.name)).toEqual(
      expect.arrayContaining(['charge', 'capture', 'void', 'refund']),
    )
    const route = { method: 'POST', url: '/v1/subscriptions', recovery: named('subscription') }
    expect(() => requireRecoveries([route], worker)).toThrow(
      'POST /v1/subscriptions names the Recovery subscription, which the recovery worker does not have: add it to ' +
        'src/recovery/registry.ts (docs/extending.md)',
    )
    expect(() => requireRecoveries([route], [...worker, named('subscription')])).not.toThrow()
    expect(() => requireRecoveries([], [...worker, named('refund')])).toThrow(
      'two Recoveries are named refund in src/recovery/registry.ts: give each its own name',
    )
  })

  it('when a claim was opened before claims named their Recovery, then migration 0023 names it and the worker settles it', async () => {
    const user = await suite.context.newAccount()
    processor.loseNextAnswer()
    expect((await user.post('/v1/charges', chargeBody(), { key: 'before-0023' })).statusCode).toBe(503)
    const { sql } = suite.context
    // The claim as the version before wrote it: its request without the Recovery's name.
    await sql`update idempotency_keys set request = request - 'recovery' where account_id = ${user.id}`
    await sql`delete from schema_migrations where name = '0023_claims_name_their_recovery.sql'`
    expect(await migrate(suite.context.databaseUrl)).toEqual(['0023_claims_name_their_recovery.sql'])
    const [claim] = await sql`select request from idempotency_keys where account_id = ${user.id}`
    expect(claim!.request.recovery).toBe('charge')

    const run = await recover()
    expect(run).toMatchObject({ settled: 1, failed: 0 })
    expect(await countCharges(sql, user.id)).toBe(1)
    const retry = await user.post('/v1/charges', chargeBody(), { key: 'before-0023' })
    expect(retry.statusCode).toBe(201)
    expect(retry.headers['idempotent-replayed']).toBe('true')
  })

  it('when an open claim names a Recovery the worker lacks, or none, then the worker leaves it and the backlog shows it', async () => {
    const user = await suite.context.newAccount()
    const { sql } = suite.context
    for (const key of ['names-a-gone-recovery', 'names-none']) {
      processor.loseNextAnswer()
      expect((await user.post('/v1/charges', chargeBody(), { key })).statusCode).toBe(503)
    }
    await sql`update idempotency_keys set request = request || '{"recovery": "gone"}'
      where account_id = ${user.id} and key = 'names-a-gone-recovery'`
    await sql`update idempotency_keys set request = request - 'recovery'
      where account_id = ${user.id} and key = 'names-none'`
    const before = await settlementBacklog(sql, 0)
    const run = await recover()
    expect(run).toEqual({ settled: 0, released: 0, failed: 0 })
    expect(await countCharges(sql, user.id)).toBe(0)
    // Nothing fails silently: both are overdue, and stay so (the watchdog turns the process not ready).
    expect(before.overdue).toBeGreaterThanOrEqual(2)
    expect((await settlementBacklog(sql, 0)).overdue).toBe(before.overdue)
    await sql`delete from idempotency_keys where account_id = ${user.id}`
  })
})
