// The nemesis: a schedule of faults drawn from the seed before the run starts (so that it is printed and the same
// seed draws it again), then carried out against the running formation. Processes are killed (SIGKILL, started
// again by their supervisor) or stopped (SIGSTOP, continued later: long enough to cross the lease, the recovery
// grace and the request deadline); the primary is switched over, killed (its node rejoins later) or crashed in
// place (its keeper restarts PostgreSQL); database connections are cut or stalled at the proxies; the Stripe
// test server drops connections before or after acting, answers late, or fails. One change of the database's
// topology at a time: one drawn while another is still under way is skipped, and the report says so.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Formation, FormationNode } from '../helpers/auto-failover.js'
import type { StripeTestServer } from '../helpers/stripe/server.js'
import type { Random } from './random.js'
import type { Stack } from './stack.js'
import type { DatabaseProxy } from './tcp-proxies.js'

export type Fault =
  | { kind: 'kill'; process: string; restartAfterMs: number }
  | { kind: 'pause'; process: string; ms: number }
  | { kind: 'switchover' }
  | { kind: 'kill-primary'; rejoinAfterMs: number }
  | { kind: 'crash-postgres' }
  | { kind: 'cut-connections'; node: number }
  | { kind: 'stall-connections'; node: number; ms: number }
  | { kind: 'stripe'; fault: 'drop-before' | 'drop-after' | 'slow' | 'error'; times: number }

export interface Scheduled {
  atMs: number
  fault: Fault
}

export interface Target {
  formation: Formation
  proxies: DatabaseProxy[]
  stacks: Stack[]
  stripe: StripeTestServer | undefined
}

const TOPOLOGY = new Set(['switchover', 'kill-primary', 'crash-postgres'])

/** Faults every 0.5-4 s for `durationMs`, on the processes named. */
export function drawSchedule(
  random: Random,
  durationMs: number,
  processes: string[],
  withStripe: boolean,
): Scheduled[] {
  const schedule: Scheduled[] = []
  for (let atMs = random.int(2000, 4000); atMs < durationMs; atMs += random.int(500, 4000)) {
    const roll = random.next()
    const fault: Fault =
      roll < 0.2
        ? { kind: 'kill', process: random.pick(processes), restartAfterMs: random.int(500, 4000) }
        : roll < 0.38
          ? { kind: 'pause', process: random.pick(processes), ms: random.int(1000, 9000) }
          : roll < 0.5
            ? { kind: 'cut-connections', node: random.int(0, 1) }
            : roll < 0.62
              ? { kind: 'stall-connections', node: random.int(0, 1), ms: random.int(500, 6000) }
              : roll < 0.68
                ? { kind: 'switchover' }
                : roll < 0.74
                  ? { kind: 'kill-primary', rejoinAfterMs: random.int(3000, 10_000) }
                  : roll < 0.8
                    ? { kind: 'crash-postgres' }
                    : withStripe
                      ? {
                          kind: 'stripe',
                          fault: random.pick(['drop-before', 'drop-after', 'slow', 'error'] as const),
                          times: random.int(1, 4),
                        }
                      : { kind: 'kill', process: random.pick(processes), restartAfterMs: random.int(500, 4000) }
    schedule.push({ atMs, fault })
  }
  return schedule
}

export interface NemesisRun {
  /** Faults carried out, by kind; and those skipped (a topology change already under way). */
  injected: Record<string, number>
  skipped: Record<string, number>
  lastFaultAt: number
  /** Waits for the schedule's end and for the topology change under way, if any. */
  done: Promise<void>
}

export function runNemesis(schedule: Scheduled[], target: Target, log: (line: string) => void): NemesisRun {
  const run: NemesisRun = { injected: {}, skipped: {}, lastFaultAt: Date.now(), done: Promise.resolve() }
  const started = Date.now()
  let topology: Promise<void> | undefined
  const count = (into: Record<string, number>, kind: string) => (into[kind] = (into[kind] ?? 0) + 1)
  const members = new Map(
    target.stacks.flatMap((stack) => stack.members.map((member) => [member.name, { stack, member }] as const)),
  )

  const apply = (fault: Fault) => {
    switch (fault.kind) {
      case 'kill': {
        const found = members.get(fault.process)!
        return found.stack.kill(found.member, fault.restartAfterMs)
      }
      case 'pause': {
        const found = members.get(fault.process)!
        return found.stack.pause(found.member, fault.ms)
      }
      case 'cut-connections':
        return target.proxies[fault.node]!.cut()
      case 'stall-connections':
        return target.proxies[fault.node]!.stall(fault.ms)
      case 'stripe':
        return stripeFault(target.stripe!, fault)
      default:
        topology = changeTopology(target.formation, fault, log).finally(() => (topology = undefined))
    }
  }

  run.done = (async () => {
    for (const { atMs, fault } of schedule) {
      await sleep(started + atMs - Date.now())
      if (TOPOLOGY.has(fault.kind) && topology) {
        count(run.skipped, fault.kind)
        continue
      }
      log(`+${((Date.now() - started) / 1000).toFixed(1)}s ${describe(fault)}`)
      apply(fault)
      count(run.injected, fault.kind)
      run.lastFaultAt = Date.now()
    }
    await topology
    run.lastFaultAt = Math.max(run.lastFaultAt, Date.now())
  })()
  return run
}

export function describe(fault: Fault): string {
  const { kind, ...details } = fault
  return `${kind} ${Object.entries(details)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ')}`.trim()
}

async function changeTopology(formation: Formation, fault: Fault, log: (line: string) => void): Promise<void> {
  try {
    // A topology change on a formation still recovering from the last would only wait for it: settle first.
    await formation.settled(180_000)
    if (fault.kind === 'switchover') await formation.switchover()
    if (fault.kind === 'crash-postgres') await crashPostgres(await formation.settled())
    if (fault.kind === 'kill-primary') {
      const killed = await formation.killPrimary()
      await sleep(fault.rejoinAfterMs)
      formation.restart(killed)
    }
  } catch (error) {
    log(`${fault.kind} did not complete: ${(error as Error).message}`)
  }
}

/** SIGKILL to the primary's postmaster only: its keeper starts PostgreSQL again in place (crash recovery). */
async function crashPostgres(node: FormationNode): Promise<void> {
  const pid = Number((await readFile(join(node.pgdata, 'postmaster.pid'), 'utf8')).split('\n')[0])
  process.kill(pid, 'SIGKILL')
}

function stripeFault(server: StripeTestServer, fault: Extract<Fault, { kind: 'stripe' }>): void {
  const money = { method: 'POST', path: /^\/v1\/(payment_intents|refunds)/ }
  if (fault.fault === 'drop-before') server.fault(money, { kind: 'drop-before' }, fault.times)
  if (fault.fault === 'drop-after') server.fault(money, { kind: 'drop-after' }, fault.times)
  if (fault.fault === 'slow') server.fault(money, { kind: 'delay', ms: 4000, when: 'after' }, fault.times)
  if (fault.fault === 'error') server.fault(money, { kind: 'error', status: 500 }, fault.times)
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))
