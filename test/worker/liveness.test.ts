// Which pools are dead: only a pool holding locks and silent while the database heard others for the whole period;
// a live pool's long job, a lock taken a moment ago by a pool that has not spoken yet, and pools silenced together by
// an outage are left alone.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { pino } from 'pino'
import { beat, freeOrphanedLocks, unlockDeadPools } from '../../src/worker/liveness.js'
import { startWatchdog } from '../../src/worker/watchdog.js'
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

/** A pool's heartbeats as one run: heard from `fromSecondsAgo` to `toSecondsAgo`. */
async function heard(poolId: string, fromSecondsAgo: number, toSecondsAgo: number): Promise<void> {
  const at = (secondsAgo: number) => database.sql`now() - ${secondsAgo} * interval '1 second'`
  await database.sql`
    insert into worker_heartbeats (pool_id, process, heard_since, seen_at)
    values (${poolId}, 'test', ${at(fromSecondsAgo)}, ${at(toSecondsAgo)})`
}

const DEAD_AFTER = { deadAfterSeconds: 30 }

describe('unlockDeadPools', () => {
  beforeEach(async () => {
    await database.sql`delete from worker_heartbeats`
    await database.sql`
      select graphile_worker.force_unlock_workers(
        array(select distinct locked_by from graphile_worker.jobs where locked_by is not null))`
  })

  it('when pools hold locks, then only those silent for the whole period lose them', async () => {
    const { sql } = database
    const dead = await lockedJob('pool-dead', 60)
    const longJob = await lockedJob('pool-alive', 60)
    const justStarted = await lockedJob('pool-new', 1)
    await heard('pool-alive', 120, 0)
    await heard('pool-dead', 120, 40)

    expect(await unlockDeadPools(sql, DEAD_AFTER)).toEqual(['pool-dead'])

    expect(await lockerOf(dead)).toEqual({ job: null, queue: null })
    expect(await lockerOf(longJob)).toEqual({ job: 'pool-alive', queue: 'pool-alive' })
    expect(await lockerOf(justStarted)).toEqual({ job: 'pool-new', queue: 'pool-new' })
    expect(await unlockDeadPools(sql, DEAD_AFTER)).toEqual([])
  })

  it('when an outage silenced every pool, then none is dead: the time nobody was heard counts for nobody', async () => {
    const job = await lockedJob('pool-a', 300)
    await heard('pool-a', 300, 100)
    await heard('pool-b', 300, 100)
    // The database is back; pool-b speaks first, pool-a has not yet.
    await beat(database.sql, ['pool-b'], 'test', 10)
    expect(await unlockDeadPools(database.sql, DEAD_AFTER)).toEqual([])
    expect(await lockerOf(job)).toEqual({ job: 'pool-a', queue: 'pool-a' })
  })

  it('when processes restart again and again, then a pool silent while their runs add up to the period is dead, though none ran that long', async () => {
    const job = await lockedJob('pool-killed', 60)
    await heard('pool-killed', 120, 60)
    // Restarted processes, each heard for 13 s, with 2 s between them: 4 × 13 = 52 s heard since pool-killed was.
    for (const [index, from] of [58, 43, 28, 13].entries()) await heard(`pool-restart-${index}`, from, from - 13)

    expect(await unlockDeadPools(database.sql, DEAD_AFTER)).toEqual(['pool-killed'])
    expect(await lockerOf(job)).toEqual({ job: null, queue: null })
  })

  it('when runs overlap, then the time they share is heard once', async () => {
    const job = await lockedJob('pool-quiet', 60)
    await heard('pool-quiet', 120, 25)
    // Three pools heard over the same 20 s, and one more reaching 5 s further back: 25 s heard, not 65.
    for (const pool of ['pool-x', 'pool-y', 'pool-z']) await heard(pool, 20, 0)
    await heard('pool-w', 25, 10)

    expect(await unlockDeadPools(database.sql, DEAD_AFTER)).toEqual([])
    await heard('pool-v', 40, 30) // before pool-quiet was last heard: no part of its silence
    expect(await unlockDeadPools(database.sql, DEAD_AFTER)).toEqual([])
    expect(await lockerOf(job)).toEqual({ job: 'pool-quiet', queue: 'pool-quiet' })
  })

  it('when a pool beats after a gap longer than the gap allowed, then a new run begins; beats within it extend the run', async () => {
    const { sql } = database
    await heard('pool-gappy', 100, 50)
    await beat(sql, ['pool-gappy'], 'test', 10)
    const [row] = await sql<{ run: number }[]>`
      select extract(epoch from seen_at - heard_since)::int as run from worker_heartbeats where pool_id = 'pool-gappy'`
    expect(row!.run).toBe(0)
    await sql`update worker_heartbeats set heard_since = now() - interval '30 seconds', seen_at = now() - interval
      '5 seconds' where pool_id = 'pool-gappy'`
    await beat(sql, ['pool-gappy'], 'test', 10)
    const [extended] = await sql<{ run: number }[]>`
      select extract(epoch from seen_at - heard_since)::int as run from worker_heartbeats where pool_id = 'pool-gappy'`
    expect(extended!.run).toBe(30)
  })
})

describe('a watchdog just started', () => {
  it('when restarted processes were heard for the period since a pool holding locks was, then its first check frees them', async () => {
    const job = await lockedJob('pool-before-restarts', 60)
    await heard('pool-before-restarts', 120, 60)
    for (const [index, from] of [58, 43, 28, 13].entries()) await heard(`pool-earlier-${index}`, from, from - 13)
    const pools = { ids: () => ['pool-fresh'], running: () => [] }
    const settings = {
      ...DEAD_AFTER,
      behindAfterSeconds: 180,
      graceSeconds: 60,
      processName: 'test',
    }
    const watchdog = await startWatchdog(database.sql, pools, settings, pino({ level: 'silent' }))
    await watchdog.stop()
    expect(await lockerOf(job)).toEqual({ job: null, queue: null })
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
