// Worker liveness. graphile-worker keeps a job, and the named queue it runs in, locked by the pool that took it
// until that pool completes it, or for four hours if the pool died (its stale-lock reset). A worker SIGKILLed
// while it held the recovery queue would stop all settlement for those hours, and one killed mid-delivery would
// stop that endpoint's webhooks. So each pool says it is alive every few seconds (worker_heartbeats), and a pool
// that has not said so for WORKER_DEAD_AFTER_SECONDS while it holds locks is presumed dead: its locks are freed
// (graphile_worker.force_unlock_workers) and its jobs run again on a live pool.
//
// Running a job twice is safe here: every task is fenced or idempotent (recovery claims take a token, deliveries
// are at least once, expiry holds a lease on the charge, the reapers delete what is due). A pool that was only
// stalled and wakes up finds its job done or redone; completing it then deletes nothing of another pool's.
import type { Sql } from '../db/connect.js'

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
          where alive.pool_id = locks.locked_by and alive.seen_at > now() - ${settings.deadAfterSeconds} * interval '1 second')`
    const poolIds = dead.map((row) => row.pool_id)
    if (poolIds.length === 0) return []
    await tx`select graphile_worker.force_unlock_workers(${poolIds}::text[])`
    await tx`delete from worker_heartbeats where pool_id = any(${poolIds}::text[])`
    return poolIds
  })
}

/** Forgets pools that stopped cleanly (graphile-worker released their locks itself). */
export async function forgetPools(sql: Sql, poolIds: string[]): Promise<void> {
  await sql`delete from worker_heartbeats where pool_id = any(${poolIds}::text[])`
}

/** Forgets dead pools that held no lock when they died: nothing to free, nothing to keep their row for. */
export async function forgetSilentPools(sql: Sql, silentForSeconds: number): Promise<void> {
  await sql`delete from worker_heartbeats where seen_at < now() - ${silentForSeconds} * interval '1 second'`
}
