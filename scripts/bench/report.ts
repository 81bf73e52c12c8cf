// Turns the samples of a benchmark run into the table it prints: per-round ratios with their spread, and the goals.
import type { Measurement } from './load.js'

export interface Sample extends Measurement {
  round: number
  scenario: 'new charge' | 'replay' | 'one client'
  implementation: string
}

export interface Run {
  samples: Sample[]
  bursts: { duplicates: number; distinct: number; conflicts: number }[]
  node: string
  postgres: string
  /** How the bench database compares text: C, or an ICU locale. */
  collation: string
  cores: number
  rounds: number
  seconds: number
}

const SERVICE = 'this service'
/** This service with IDEMPOTENCY_REPLAY_CACHE_SIZE=0: each replay reads the database. */
export const UNCACHED = 'no replay cache'
/** The seed middleware whose charge also writes the service's event row: like for like. */
export const SEED_WITH_EVENT = 'seed + event'
export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}
/** A ratio's median and range over rounds: 0.85x [0.81-0.91]. */
export const spread = (values: number[]) =>
  `${median(values).toFixed(2)}x [${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)}]`

export function report(run: Run): string {
  const find = (round: number, scenario: Sample['scenario'], implementation: string) =>
    run.samples.find(
      (sample) => sample.round === round && sample.scenario === scenario && sample.implementation === implementation,
    )?.rps ?? NaN
  const perRound = (ratio: (round: number) => number) => Array.from({ length: run.rounds }, (_, round) => ratio(round))
  const ratios = {
    newVsSeed: perRound((r) => find(r, 'new charge', SERVICE) / find(r, 'new charge', 'seed middleware')),
    newVsNone: perRound((r) => find(r, 'new charge', SERVICE) / find(r, 'new charge', 'no idempotency')),
    newVsSeedWithEvent: perRound((r) => find(r, 'new charge', SERVICE) / find(r, 'new charge', SEED_WITH_EVENT)),
    replayVsSeed: perRound((r) => find(r, 'replay', SERVICE) / find(r, 'replay', 'seed middleware')),
    uncachedReplayVsSeed: perRound((r) => find(r, 'replay', UNCACHED) / find(r, 'replay', 'seed middleware')),
    replayVsOwnNew: perRound((r) => find(r, 'replay', SERVICE) / find(r, 'new charge', SERVICE)),
  }
  /**
   * A cost per new charge of this service over another's, round by round (the same round's measurements side by side).
   */
  const costRatio = (pick: (sample: Sample) => number, other: string) =>
    perRound((r) => {
      const of = (implementation: string) =>
        run.samples.find(
          (sample) =>
            sample.round === r && sample.scenario === 'new charge' && sample.implementation === implementation,
        )
      return pick(of(SERVICE)!) / pick(of(other)!)
    })
  const costGoal = (label: string, values: number[], maximum: number) =>
    `  ${median(values) <= maximum ? 'ok  ' : 'MISS'} ${label.padEnd(58)} ${spread(values)}   goal <= ${maximum}x`
  const p99 = (scenario: Sample['scenario'], implementation: string) =>
    median(
      run.samples
        .filter((sample) => sample.scenario === scenario && sample.implementation === implementation)
        .map((sample) => sample.p99),
    )
  const burstRatio = median(run.bursts.map((b) => b.duplicates)) / median(run.bursts.map((b) => b.distinct))
  const conflictShare = run.bursts.reduce((sum, b) => sum + b.conflicts, 0) / (run.bursts.length * 20)

  const lines = [
    `npm run bench: Node ${run.node}, PostgreSQL ${run.postgres} (collation ${run.collation}), ${run.cores} cores; ` +
      `${run.rounds} interleaved rounds of ${run.seconds} s, 20 connections`,
    '',
    'scenario     implementation     req/s   p50 ms  p99 ms  node ms/req  pg ms/req  stmts/req  commits/req  WAL ' +
      'B/req  FPI B/req  btree B/req  RSS MB  unexpected',
  ]
  for (const scenario of ['new charge', 'replay', 'one client'] as const) {
    for (const implementation of [SERVICE, UNCACHED, 'seed middleware', SEED_WITH_EVENT, 'no idempotency']) {
      const rows = run.samples.filter(
        (sample) => sample.scenario === scenario && sample.implementation === implementation,
      )
      if (!rows.length) continue
      const m = (pick: (sample: Sample) => number) => median(rows.map(pick))
      lines.push(
        `${scenario.padEnd(13)}${implementation.padEnd(17)}${m((s) => s.rps)
          .toFixed(0)
          .padStart(7)}${m((s) => s.p50)
          .toFixed(1)
          .padStart(9)}` +
          `${m((s) => s.p99)
            .toFixed(1)
            .padStart(8)}${m((s) => s.nodeMs)
            .toFixed(3)
            .padStart(13)}${m((s) => s.pgMs)
            .toFixed(3)
            .padStart(11)}` +
          `${m((s) => s.statements)
            .toFixed(2)
            .padStart(11)}${m((s) => s.commits)
            .toFixed(2)
            .padStart(13)}` +
          `${m((s) => s.walBytes)
            .toFixed(0)
            .padStart(11)}${m((s) => s.fpiBytes)
            .toFixed(0)
            .padStart(11)}${m((s) => s.btreeBytes)
            .toFixed(0)
            .padStart(13)}` +
          `${m((s) => s.rssMb)
            .toFixed(0)
            .padStart(8)}${String(rows.reduce((sum, s) => sum + s.unexpected, 0)).padStart(12)}`,
      )
    }
  }
  lines.push(...walByRelation(run))
  const goal = (label: string, values: number[], minimum: number) =>
    `  ${median(values) >= minimum ? 'ok  ' : 'MISS'} ${label.padEnd(58)} ${spread(values)}   goal >= ${minimum}x`
  lines.push(
    '',
    'Ratios of throughput, median [min-max] over rounds:',
    goal('new charge, this service / seed middleware', ratios.newVsSeed, 1.2),
    goal('new charge, this service / no idempotency', ratios.newVsNone, 0.85),
    `  info ${'new charge, this service / seed + event (like for like)'.padEnd(58)} ` +
      `${spread(ratios.newVsSeedWithEvent)}`,
    `  ${p99('new charge', SERVICE) <= p99('new charge', 'seed middleware') ? 'ok  ' : 'MISS'} ` +
      `${'new charge p99, this service / seed middleware'.padEnd(58)} ` +
      `${(p99('new charge', SERVICE) / p99('new charge', 'seed middleware')).toFixed(2)}x         goal <= 1x`,
    `  ${p99('new charge', SERVICE) <= p99('new charge', 'no idempotency') ? 'ok  ' : 'MISS'} ` +
      `${'new charge p99, this service / no idempotency'.padEnd(58)} ` +
      `${(p99('new charge', SERVICE) / p99('new charge', 'no idempotency')).toFixed(2)}x         goal <= 1x`,
    '',
    'What a new charge costs the primary, this service over the others, median [min-max] over rounds:',
    costGoal(
      'PostgreSQL CPU per charge, this service / no idempotency',
      costRatio((s) => s.pgMs, 'no idempotency'),
      1.5,
    ),
    costGoal(
      'WAL per charge, this service / seed middleware',
      costRatio((s) => s.walBytes, 'seed middleware'),
      1,
    ),
    `  info ${'WAL per charge, this service / no idempotency'.padEnd(58)} ` +
      `${spread(costRatio((s) => s.walBytes, 'no idempotency'))}`,
    `  info ${'full-page images per charge, this service / seed middleware'.padEnd(58)} ` +
      `${spread(costRatio((s) => s.fpiBytes || 1, 'seed middleware'))}`,
    '',
    goal('replay, this service / seed middleware', ratios.replayVsSeed, 2),
    goal('replay / new charge, this service', ratios.replayVsOwnNew, 2),
    `  info ${'replay, no replay cache / seed middleware'.padEnd(58)} ${spread(ratios.uncachedReplayVsSeed)}`,
    `  ${burstRatio <= 1 ? 'ok  ' : 'MISS'} ` +
      `${'20 concurrent duplicates of one key / 20 distinct keys (time)'.padEnd(58)} ${burstRatio.toFixed(2)}x       ` +
      `  goal <= 1x` +
      `   (${(conflictShare * 100).toFixed(0)}% of the duplicates answered 409)`,
  )
  return lines.join('\n')
}

/** Where a new charge's WAL goes, relation by relation (each index apart), for each implementation. */
function walByRelation(run: Run): string[] {
  const implementations = [SERVICE, 'seed middleware', SEED_WITH_EVENT, 'no idempotency']
  const bytes = (implementation: string, relation: string) =>
    median(
      run.samples
        .filter((sample) => sample.scenario === 'new charge' && sample.implementation === implementation)
        .map((sample) => sample.walByRelation[relation] ?? 0),
    )
  const relations = [
    ...new Set(
      run.samples
        .filter((sample) => sample.scenario === 'new charge')
        .flatMap((sample) => Object.keys(sample.walByRelation)),
    ),
  ]
    .filter((relation) => implementations.some((implementation) => bytes(implementation, relation) >= 5))
    .sort((a, b) => bytes(SERVICE, b) - bytes(SERVICE, a))
  return [
    '',
    'WAL per new charge by relation, bytes per request (a record counts for the first block it changes), median ' +
      'over rounds:',
    `${'relation'.padEnd(40)}${implementations.map((implementation) => implementation.padStart(17)).join('')}`,
    ...relations.map(
      (relation) =>
        relation.padEnd(40) +
        implementations.map((implementation) => bytes(implementation, relation).toFixed(0).padStart(17)).join(''),
    ),
  ]
}
