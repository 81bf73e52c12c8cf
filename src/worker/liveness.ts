// Worker liveness. graphile-worker keeps a job, and the named queue it runs in, locked by the pool that took it
// until that pool completes it, or for four hours if the pool died (its stale-lock reset). A worker SIGKILLed
// while it held the recovery queue would stop all settlement for those hours, and one killed mid-delivery would
// stop that endpoint's webhooks. So each pool says it is alive every few seconds (worker_heartbeats), and a pool
// that has not said so for WORKER_DEAD_AFTER_SECONDS while it holds locks is presumed dead: its locks are freed
// (graphile_worker.force_unlock_workers) and its jobs run again on a live pool.
//
// A live pool can hold a lock it no longer uses, too: graphile-worker records a job's completion after the job
// and gives up when that write fails for good (a node gone read-only mid-failover, a statement refused), and a
// job it locked may never reach it (the connection lost with get_job's answer). Such a lock would last the same
// four hours. So each process also frees, in its own pools, the locks older than WORKER_DEAD_AFTER_SECONDS that
// none of its workers is running.
//
// Running a job twice is safe here: every task is fenced or idempotent (recovery claims take a token, deliveries
// are at least once, expiry holds a lease on the charge, the reapers delete what is due). A pool that was only
// stalled and wakes up finds its job done or redone; completing it then deletes nothing of another pool's.
import type { Sql } from '../db/connect.js'
import { theRow } from '../db/rows.js'

export interface LivenessSettings {
  /** A pool silent this long (and holding locks taken at least this long ago) is dead. */
  deadAfterSeconds: number
}

/** Writes this process's pools as alive now. */
export async function beat(sql: Sql, poolIds: string[], processName: string): Promise<void> {
  if (poolIds.length === 0) return
  await sql`
    insert into worker_heartbeats (pool_id, process)
    select pool_id, ${processName} from unnest(${poolIds}::text[]) as pool_id
    on conflict (pool_id) do update set seen_at = now()`
}

/**
 * Frees the locks of pools that are dead: locks taken more than `deadAfterSeconds` ago by a pool with no
 * heartbeat since. Returns the pools whose locks were freed.
 */
export async function unlockDeadPools(sql: Sql, settings: LivenessSettings): Promise<string[]> {
  return sql.begin(async (tx) => {
    const dead = await tx<{ pool_id: string }[]>`
      select distinct locks.locked_by as pool_id
      from (
        select locked_by, locked_at from graphile_worker.jobs where locked_by is not null
        union all
        select locked_by, locked_at from graphile_worker._private_job_queues where locked_by is not null
      ) as locks
      where locks.locked_at < now() - ${settings.deadAfterSeconds} * interval '1 second'
        and not exists (
          select 1 from worker_heartbeats as alive
          where alive.pool_id = locks.locked_by and alive.seen_at > now() - ${settings.deadAfterSeconds} * interval
            '1 second')`
    const poolIds = dead.map((row) => row.pool_id)
    if (poolIds.length === 0) return []
    await tx`select graphile_worker.force_unlock_workers(${poolIds}::text[])`
    await tx`delete from worker_heartbeats where pool_id = any(${poolIds}::text[])`
    return poolIds
  })
}

/**
 * Frees the locks this process's pools hold on jobs none of its workers runs (and on the queues of those jobs),
 * taken more than `deadAfterSeconds` ago: a completion that could not be recorded, a locked job that never
 * arrived. Returns how many jobs and queues were freed.
 */
export async function freeOrphanedLocks(
  sql: Sql,
  poolIds: string[],
  runningJobIds: string[],
  settings: LivenessSettings,
): Promise<{ jobs: number; queues: number }> {
  if (poolIds.length === 0) return { jobs: 0, queues: 0 }
  // graphile-worker's own unlock (force_unlock_workers) frees every lock of a pool, the running jobs' too; this
  // is the same update, limited to what no worker runs.
  const freed = await sql<{ jobs: number; queues: number }[]>`
    with jobs as (
      update graphile_worker._private_jobs set locked_by = null, locked_at = null
      where locked_by = any(${poolIds}::text[])
        and locked_at < now() - ${settings.deadAfterSeconds} * interval '1 second'
        and id <> all(${runningJobIds}::bigint[])
      returning id),
    queues as (
      update graphile_worker._private_job_queues as queue set locked_by = null, locked_at = null
      where queue.locked_by = any(${poolIds}::text[])
        and queue.locked_at < now() - ${settings.deadAfterSeconds} * interval '1 second'
        and not exists (select 1 from graphile_worker._private_jobs as job where job.job_queue_id = queue.id and
          job.id = any(${runningJobIds}::bigint[]))
      returning queue.id)
    select (select count(*) from jobs)::int as jobs, (select count(*) from queues)::int as queues`
  return theRow(freed, 'the counts')
}

/** Forgets pools that stopped cleanly (graphile-worker released their locks itself). */
export async function forgetPools(sql: Sql, poolIds: string[]): Promise<void> {
  await sql`delete from worker_heartbeats where pool_id = any(${poolIds}::text[])`
}

/** Forgets dead pools that held no lock when they died: nothing to free, nothing to keep their row for. */
export async function forgetSilentPools(sql: Sql, silentForSeconds: number): Promise<void> {
  await sql`delete from worker_heartbeats where seen_at < now() - ${silentForSeconds} * interval '1 second'`
}
