// Which pools are dead: only a pool silent for the whole period, holding locks taken before it; a live pool's
// long job, and a lock taken a moment ago by a pool that has not spoken yet, are left alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { beat, freeOrphanedLocks, unlockDeadPools } from '../../src/worker/liveness.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(async () => {
  await database.drop()
})

/** A job in a queue of its own, locked by `poolId` `secondsAgo` seconds ago, as graphile-worker locks a job it runs. */
async function lockedJob(poolId: string, secondsAgo: number, queue = `queue-of-${poolId}`): Promise<string> {
  const { sql } = database
  const [job] = await sql<{ id: string }[]>`select id from graphile_worker.add_job('test_task', queue_name => ${queue})`
  const lockedAt = sql`now() - ${secondsAgo} * interval '1 second'`
  await sql`update graphile_worker._private_jobs set locked_by = ${poolId}, locked_at = ${lockedAt} where id =
    ${job!.id}`
  await sql`update graphile_worker._private_job_queues set locked_by = ${poolId}, locked_at = ${lockedAt} where
    queue_name = ${queue}`
  return job!.id
}

async function lockerOf(jobId: string): Promise<{ job: string | null; queue: string | null }> {
  const [row] = await database.sql<{ job: string | null; queue: string | null }[]>`
    select j.locked_by as job, q.locked_by as queue
    from graphile_worker._private_jobs j join graphile_worker._private_job_queues q on q.id = j.job_queue_id
    where j.id = ${jobId}`
  return row!
}

describe('unlockDeadPools', () => {
  it('when pools hold locks, then only those silent for the whole period lose them', async () => {
    const { sql } = database
    const dead = await lockedJob('pool-dead', 60)
    const longJob = await lockedJob('pool-alive', 60)
    const justStarted = await lockedJob('pool-new', 1)
    await beat(sql, ['pool-alive'], 'test')
    await beat(sql, ['pool-dead'], 'test')
    await sql`update worker_heartbeats set seen_at = now() - interval '40 seconds' where pool_id = 'pool-dead'`

    expect(await unlockDeadPools(sql, { deadAfterSeconds: 30 })).toEqual(['pool-dead'])

    expect(await lockerOf(dead)).toEqual({ job: null, queue: null })
    expect(await lockerOf(longJob)).toEqual({ job: 'pool-alive', queue: 'pool-alive' })
    expect(await lockerOf(justStarted)).toEqual({ job: 'pool-new', queue: 'pool-new' })
    expect((await sql`select pool_id from worker_heartbeats order by pool_id`).map((row) => row.pool_id)).toEqual([
      'pool-alive',
    ])
    expect(await unlockDeadPools(sql, { deadAfterSeconds: 30 })).toEqual([])
  })
})

describe('freeOrphanedLocks', () => {
  it("when a live pool holds locks on jobs it does not run, then those older than the period are freed, its running job's and other pools' kept", async () => {
    const orphaned = await lockedJob('pool-own', 60, 'orphaned')
    const running = await lockedJob('pool-own', 60, 'running')
    const justTaken = await lockedJob('pool-own', 1, 'just-taken')
    const othersJob = await lockedJob('pool-other', 60)

    expect(await freeOrphanedLocks(database.sql, ['pool-own'], [running], { deadAfterSeconds: 30 })).toEqual({
      jobs: 1,
      queues: 1,
    })

    expect(await lockerOf(orphaned)).toEqual({ job: null, queue: null })
    expect(await lockerOf(running)).toEqual({ job: 'pool-own', queue: 'pool-own' })
    expect(await lockerOf(justTaken)).toEqual({ job: 'pool-own', queue: 'pool-own' })
    expect(await lockerOf(othersJob)).toEqual({ job: 'pool-other', queue: 'pool-other' })
    expect(await freeOrphanedLocks(database.sql, ['pool-own'], [running], { deadAfterSeconds: 30 })).toEqual({
      jobs: 0,
      queues: 0,
    })
  })
})
