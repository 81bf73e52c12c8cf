// npm run bench:side-by-side -- [--b-sql=SQL] [--a-sql=SQL] [--b-env=JSON] [--a-env=JSON] [--a-checkout=DIR]
//   [--b-checkout=DIR] [--a-server=FILE] [--floor=RATIO]
//   [--rounds=16] [--seconds=3] [--connections=20]
// Is a change worth keeping? This service against itself, A without the change and B with it, each on its own
// database of one PostgreSQL, new charges measured in interleaved rounds, and B/A read round by round. The change
// is SQL run in B's database (an index, a setting), environment for B's server, or another checkout (a git
// worktree of the commit before, whose node_modules exist). Many short rounds and their median: on a shared
// machine one round moves by 15% or more, and the same code against itself gives 1.01x over 16 rounds.
// `--a-server` runs another server as A (scripts/bench/seed-middleware.ts: the middleware this service replaces),
// and `--floor` makes the run fail when the median B/A is below it: CI's check that new charges stay ahead of it.
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { startBenchCluster } from './cluster.js'
import { measure, type LoadOptions, type Measurement } from './load.js'
import { startServer } from './processes.js'
import { median } from './report.js'

const { values: args } = parseArgs({
  options: {
    'a-env': { type: 'string', default: '{}' },
    'b-env': { type: 'string', default: '{}' },
    'b-sql': { type: 'string' },
    // For an A checkout whose SQL this tree's migrations changed (a function redefined): put its own back in A.
    'a-sql': { type: 'string' },
    'a-checkout': { type: 'string' },
    'b-checkout': { type: 'string' },
    'a-server': { type: 'string' },
    floor: { type: 'string' },
    rounds: { type: 'string', default: '16' },
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '20' },
  },
})
const rounds = Number(args.rounds)
const serverScript = (checkout: string | undefined, server = 'src/server.ts') =>
  checkout ? `${checkout.replace(/\/$/, '')}/${server}` : server

/** Share of the whole machine's CPU time left idle between two readings of /proc/stat. */
const cpuTimes = () => {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  return { idle: fields[3]! + fields[4]!, all: fields.reduce((sum, value) => sum + value, 0) }
}

const cluster = await startBenchCluster()
try {
  const a = await cluster.database('side_a', args['a-sql'])
  const b = await cluster.database('side_b', args['b-sql'])
  const sides = [
    {
      name: 'A',
      database: a,
      server: await startServer('A', serverScript(args['a-checkout'], args['a-server']), {
        ...a.env,
        ...JSON.parse(args['a-env']!),
      }),
    },
    {
      name: 'B',
      database: b,
      server: await startServer('B', serverScript(args['b-checkout']), { ...b.env, ...JSON.parse(args['b-env']!) }),
    },
  ]
  const loadOf = (side: (typeof sides)[number]): LoadOptions => ({
    apiKey: side.database.apiKey,
    seconds: Number(args.seconds),
    connections: Number(args.connections),
    postmasterPid: cluster.postmasterPid,
    sql: side.database.sql,
  })
  for (const side of sides) await measure(side.server, { ...loadOf(side), seconds: 2 })

  const ratios: number[] = []
  const idle: Record<string, number[]> = { A: [], B: [] }
  const line = (m: Measurement) =>
    `${m.rps.toFixed(0).padStart(5)} req/s p99 ${String(m.p99).padStart(3)} ms node ${m.nodeMs.toFixed(3)} pg ` +
    `${m.pgMs.toFixed(3)}`
  for (let round = 0; round < rounds; round++) {
    const measured: Record<string, Measurement> = {}
    // Alternate which side goes first.
    for (const side of round % 2 ? [...sides].reverse() : sides) {
      const before = cpuTimes()
      measured[side.name] = await measure(side.server, loadOf(side))
      const after = cpuTimes()
      idle[side.name]!.push((after.idle - before.idle) / (after.all - before.all))
    }
    ratios.push(measured.B!.rps / measured.A!.rps)
    console.log(
      `round ${String(round + 1).padStart(2)}  A ${line(measured.A!)}  B ${line(measured.B!)}  B/A ` +
        `${ratios.at(-1)!.toFixed(3)}`,
    )
  }
  const percent = (values: number[]) => `${(100 * median(values)).toFixed(0)}%`
  console.log(
    `B/A throughput, median of ${rounds} rounds: ${median(ratios).toFixed(3)}x ` +
      `[${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)}]`,
  )
  console.log(`machine idle, median: A ${percent(idle.A!)}, B ${percent(idle.B!)}`)
  for (const side of sides) await side.server.stop()
  const floor = args.floor === undefined ? undefined : Number(args.floor)
  if (floor !== undefined && median(ratios) < floor) {
    console.error(`B/A is ${median(ratios).toFixed(3)}x, below the floor of ${floor}x`)
    process.exitCode = 1
  }
} finally {
  await cluster.stop()
}
