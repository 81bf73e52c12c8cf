// Worker liveness. graphile-worker keeps a job, and the named queue it runs in, locked by the pool that took it
// until that pool completes it, or for four hours if the pool died (its stale-lock reset). A worker SIGKILLed
// while it held the recovery queue would stop all settlement for those hours, and one killed mid-delivery would
// stop that endpoint's webhooks. So each pool says it is alive every few seconds (worker_heartbeats), and a pool
// that holds locks and has not been heard while the database heard others for WORKER_DEAD_AFTER_SECONDS is presumed
// dead: its locks are freed (graphile_worker.force_unlock_workers) and its jobs run again on a live pool.
//
// Silence is counted in the database's hearing, not in any process's clock. After an outage that silenced every pool,
// the live ones speak again before any of them is called dead, since the outage counts for nobody; and a storm of
// restarts does not keep a dead pool's locks, since a restarted process joins the hearing and does not start a clock
// of its own again.
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
  /** A pool silent this long, in time the database heard other pools, is dead. */
  deadAfterSeconds: number
}

/**
 * Writes this process's pools as alive now. A pool's beats make one run (heard_since to seen_at) while they come less
 * than `gapSeconds` apart; a longer gap begins a new one, and the gap is not time in which the pool was heard.
 */
export async function beat(sql: Sql, poolIds: string[], processName: string, gapSeconds: number): Promise<void> {
  if (poolIds.length === 0) return
  await sql`
    insert into worker_heartbeats (pool_id, process)
    select pool_id, ${processName} from unnest(${poolIds}::text[]) as pool_id
    on conflict (pool_id) do update set
      heard_since = case when worker_heartbeats.seen_at < now() - ${gapSeconds} * interval '1 second' then now()
        else worker_heartbeats.heard_since end,
      seen_at = now()`
}

/**
 * Frees the locks of pools that are dead. A pool holding locks was last heard at its last beat or the last lock it
 * took, whichever is later; it is dead once the runs of beats of every pool cover `deadAfterSeconds` since then (the
 * length of their union, each run cut at that moment: a run adds only what no earlier-starting run reached). Returns
 * the pools whose locks were freed. Their heartbeats stay, as the hearing that judges others, until
 * forgetSilentPools.
 */
export async function unlockDeadPools(sql: Sql, settings: LivenessSettings): Promise<string[]> {
  return sql.begin(async (tx) => {
    const dead = await tx<{ pool_id: string }[]>`
      with holders as (
        select locked_by as pool_id, max(locked_at) as locked_at
        from (
          select locked_by, locked_at from graphile_worker.jobs where locked_by is not null
          union all
          select locked_by, locked_at from graphile_worker._private_job_queues where locked_by is not null
        ) as locks
        group by locked_by),
      last_heard as (
        select holders.pool_id, greatest(holders.locked_at, beats.seen_at) as at
        from holders left join worker_heartbeats as beats using (pool_id))
      select last_heard.pool_id from last_heard
      cross join lateral (
        select sum(greatest(interval '0', hi - greatest(lo, coalesce(reached, lo)))) as heard
        from (
          select lo, hi, max(hi) over (order by lo, hi rows between unbounded preceding and 1 preceding) as reached
          from (
            select greatest(heard_since, last_heard.at) as lo, seen_at as hi
            from worker_heartbeats where seen_at > last_heard.at) as runs) as ordered) as hearing
      where hearing.heard >= ${settings.deadAfterSeconds} * interval '1 second'`
    const poolIds = dead.map((row) => row.pool_id)
    if (poolIds.length === 0) return []
    await tx`select graphile_worker.force_unlock_workers(${poolIds}::text[])`
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

/** Forgets pools long silent: their locks are freed, and their runs are too old to judge anyone by. */
export async function forgetSilentPools(sql: Sql, silentForSeconds: number): Promise<void> {
  await sql`delete from worker_heartbeats where seen_at < now() - ${silentForSeconds} * interval '1 second'`
}
