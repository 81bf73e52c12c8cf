// Watches the worker of this process every few seconds: says its pools are alive, frees the locks of dead ones
// and the locks its own pools hold on jobs none of its workers runs (liveness.ts), and measures how far behind
// settlement is (src/idempotency/abandoned-claims.ts). What it finds goes to the metrics, to the log and to
// readiness: a process whose settlement is behind is not ready, so that a stall is seen, never silent.
import type { Logger } from 'pino'
import type { Sql } from '../db/connect.js'
import {
  deadWorkerPools,
  orphanedWorkerLocks,
  settlementOverdueClaims,
  settlementOldestOverdueSeconds,
  workerJobLongestRunningSeconds,
} from '../observability/metrics.js'
import { settlementBacklog, type SettlementBacklog } from '../idempotency/abandoned-claims.js'
import { beat, forgetSilentPools, freeOrphanedLocks, unlockDeadPools } from './liveness.js'

export interface WatchdogSettings {
  deadAfterSeconds: number
  /** How long past due an abandoned claim may be before settlement counts as behind. */
  behindAfterSeconds: number
  graceSeconds: number
  /** Names this process in worker_heartbeats, for an operator reading it. */
  processName: string
  /** A job running longer than this is told as stuck (STUCK_AFTER_SECONDS unless given: tests). */
  stuckAfterSeconds?: number
}

/** A job a worker of this process runs now, and since when (epoch ms). */
export interface RunningJob {
  id: string
  task: string
  since: number
}

/** This process's graphile-worker pools, as the watchdog asks for them at each check. */
export interface OwnPools {
  ids(): string[]
  /** The jobs its workers run now. */
  running(): RunningJob[]
}

/**
 * A job running this long is stuck, not slow: every task is bounded well below it (the reaper paces itself for 50 s,
 * a delivery hands over for 5 s, each call out has its timeout). It holds its queue (one recovery at a time), so it
 * is told, once, with its task.
 */
const STUCK_AFTER_SECONDS = 120

export interface Watchdog {
  /** Why this process is not ready as far as its worker goes, or undefined. */
  notReady(): string | undefined
  stop(): Promise<void>
}

const BEHIND_LOG_EVERY_MS = 60_000

/** Runs the first check before it resolves, so that readiness is known once the worker is. */
export async function startWatchdog(
  sql: Sql,
  pools: OwnPools,
  settings: WatchdogSettings,
  log: Logger,
): Promise<Watchdog> {
  // A live pool beats at least twice per gap, and a gap plus two beats' time is well within the dead period: so an
  // outage shorter than the gap, counted as heard, never makes a live pool look silent for the whole period.
  const everyMs = Math.min(10_000, Math.max(1000, (settings.deadAfterSeconds * 1000) / 6))
  const gapSeconds = (2 * everyMs) / 1000
  let behind: SettlementBacklog | undefined
  let behindLoggedAt = 0
  let failing = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  let stopped = false
  const toldStuck = new Set<string>()

  async function check(): Promise<void> {
    await beat(sql, pools.ids(), settings.processName, gapSeconds)
    const unlocked = await unlockDeadPools(sql, settings)
    if (unlocked.length) {
      deadWorkerPools.inc(unlocked.length)
      log.warn(
        { pools: unlocked },
        `worker pools silent for ${settings.deadAfterSeconds} s held jobs: their locks are freed and their jobs ` +
          `run again here or on another worker`,
      )
    }
    await forgetSilentPools(sql, 10 * settings.deadAfterSeconds)
    const running = pools.running()
    const orphaned = await freeOrphanedLocks(
      sql,
      pools.ids(),
      running.map((job) => job.id),
      settings,
    )
    if (orphaned.jobs + orphaned.queues > 0) {
      orphanedWorkerLocks.inc(orphaned.jobs + orphaned.queues)
      log.warn(
        orphaned,
        `this worker held locks on ${orphaned.jobs} job(s) and ${orphaned.queues} queue(s) none of its workers ` +
          `runs (a completion not recorded, or a job taken whose answer was lost): freed, the jobs run again`,
      )
    }
    const stuckAfterSeconds = settings.stuckAfterSeconds ?? STUCK_AFTER_SECONDS
    const stuck = running.filter((job) => Date.now() - job.since > stuckAfterSeconds * 1000)
    workerJobLongestRunningSeconds.set(Math.max(0, ...running.map((job) => (Date.now() - job.since) / 1000)))
    for (const job of stuck.filter((each) => !toldStuck.has(each.id))) {
      toldStuck.add(job.id)
      log.error(
        { job: job.id, task: job.task, running_seconds: Math.round((Date.now() - job.since) / 1000) },
        `job ${job.id} (${job.task}) has run for over ${stuckAfterSeconds} s and holds its lock (and its queue's): ` +
          `a task that waits on something without a bound`,
      )
    }
    for (const id of toldStuck) if (!running.some((job) => job.id === id)) toldStuck.delete(id)
    const backlog = await settlementBacklog(sql, settings.graceSeconds)
    settlementOverdueClaims.set(backlog.overdue)
    settlementOldestOverdueSeconds.set(backlog.oldestSeconds)
    const wasBehind = behind !== undefined
    behind = backlog.oldestSeconds > settings.behindAfterSeconds ? backlog : undefined
    if (behind && Date.now() - behindLoggedAt >= BEHIND_LOG_EVERY_MS) {
      behindLoggedAt = Date.now()
      log.error({ overdue: behind.overdue, oldest_seconds: Math.round(behind.oldestSeconds) }, describeBehind(behind))
    } else if (!behind && wasBehind) {
      behindLoggedAt = 0
      log.info('settlement has caught up: no abandoned claim is overdue beyond the bound')
    }
  }

  async function tick(): Promise<void> {
    try {
      await check()
      if (failing) log.info('worker watchdog: the database answers again')
      failing = false
    } catch (error) {
      if (!failing) log.warn({ err: error }, 'worker watchdog: could not check liveness and settlement; trying again')
      failing = true
    }
  }

  function schedule(): void {
    if (stopped) return
    timer = setTimeout(() => {
      running = tick().finally(schedule)
    }, everyMs)
  }

  await tick()
  schedule()
  return {
    notReady: () => (behind ? describeBehind(behind) : undefined),
    async stop() {
      stopped = true
      clearTimeout(timer)
      // Its heartbeats stay: they are time the database heard a pool, by which others' silence is judged.
      await running
    },
  }
}

function describeBehind(backlog: SettlementBacklog): string {
  return (
    `Settlement is behind: ${backlog.overdue} abandoned claim(s) overdue, the oldest by ` +
    `${Math.round(backlog.oldestSeconds)} s; no recovery run has reached them (see the workers' logs).`
  )
}
