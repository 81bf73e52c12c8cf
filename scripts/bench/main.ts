// npm run bench [-- --quick] [-- --statements] [-- --collation=en-US] [-- --soak[=minutes]] [-- --reaper[=rows]] [--
// --large[=rows]]
// The project's performance report: this service against two baselines built from the same charges table, the
// same PostgreSQL, pool size, API-key lookup and simulated processor (scripts/bench/*.ts), driven over HTTP by
// autocannon. Rounds are interleaved and rotated, so the machine's drift hits every implementation alike, and
// results are ratios measured side by side in each round (absolute numbers drift on shared machines).
import { randomUUID } from 'node:crypto'
import { cpus } from 'node:os'
import { parseArgs } from 'node:util'
import { startBenchCluster } from './cluster.js'
import { burst, CHARGE_BODY, measure, type LoadOptions, type Measurement } from './load.js'
import { largeTable } from './large-table.js'
import { startServer, type ServerUnderTest } from './processes.js'
import { reaperUnderLoad } from './reaper.js'
import { report, SEED_WITH_EVENT, UNCACHED, type Sample } from './report.js'
import { soak } from './soak.js'
import { statementCosts } from './statements.js'

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    soak: { type: 'string' },
    reaper: { type: 'string' },
    large: { type: 'string' },
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    statements: { type: 'boolean', default: false },
    collation: { type: 'string' },
  },
})
const quick = args.quick!
const rounds = Number(args.rounds ?? (quick ? 2 : 4))
const seconds = Number(args.seconds ?? (quick ? 5 : 10))

const cluster = await startBenchCluster()
const { sql, apiKey, env } = await cluster.database('bench', process.env.BENCH_SQL, { icuLocale: args.collation })
const [{ version }] = (await sql<
  { version: string }[]
>`select current_setting('server_version') as version`) as unknown as [{ version: string }]

const servers: ServerUnderTest[] = []
const cleanUp = async () => {
  for (const server of servers) await server.stop()
  await cluster.stop()
}

try {
  const service = await startServer('this service', 'src/server.ts', env)
  const seed = await startServer('seed middleware', 'scripts/bench/seed-middleware.ts', env)
  const none = await startServer('no idempotency', 'scripts/bench/no-idempotency.ts', env)
  const seedWithEvent = await startServer(SEED_WITH_EVENT, 'scripts/bench/seed-middleware.ts', {
    ...env,
    SEED_WRITES_EVENT: 'true',
  })
  // This service again with its replay cache off: every replay then reads the database, as a replay of a key that
  // this instance has not replayed before does.
  const uncached = await startServer(UNCACHED, 'src/server.ts', { ...env, IDEMPOTENCY_REPLAY_CACHE_SIZE: '0' })
  servers.push(service, seed, none, uncached, seedWithEvent)
  const load: LoadOptions = { apiKey, seconds, connections: 20, postmasterPid: cluster.postmasterPid, sql }

  // A completed key per implementation to replay, and a warm-up for each.
  const replayKeys = new Map<ServerUnderTest, string>()
  for (const server of servers) {
    const key = `replay-${randomUUID()}`
    const response = await fetch(`${server.url}/v1/charges`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: CHARGE_BODY,
    })
    if (response.status !== 201) throw new Error(`${server.name}: the first charge answered ${response.status}`)
    replayKeys.set(server, key)
    await measure(server, { ...load, seconds: 2 })
  }

  const scenarios: { scenario: Sample['scenario']; server: ServerUnderTest; key?: string; connections?: number }[] = [
    { scenario: 'new charge', server: service },
    { scenario: 'new charge', server: seed },
    { scenario: 'new charge', server: none },
    { scenario: 'new charge', server: seedWithEvent },
    { scenario: 'replay', server: service, key: replayKeys.get(service)! },
    { scenario: 'replay', server: seed, key: replayKeys.get(seed)! },
    { scenario: 'replay', server: uncached, key: replayKeys.get(uncached)! },
    // New charges from one connection: the latency of a request that has nothing to share a statement with.
    { scenario: 'one client', server: service, connections: 1 },
  ]
  const samples: Sample[] = []
  for (let round = 0; round < rounds; round++) {
    // Rotate the order each round, so that no implementation always runs first or last.
    const order = scenarios.map((_, index) => scenarios[(index + round) % scenarios.length]!)
    for (const { scenario, server, key, connections } of order) {
      const measured: Measurement = await measure(
        server,
        { ...load, connections: connections ?? load.connections },
        key,
      )
      samples.push({ round, scenario, implementation: server.name, ...measured })
      process.stderr.write(
        `  round ${round + 1}/${rounds} ${scenario.padEnd(10)} ${server.name.padEnd(16)} ` +
          `${measured.rps.toFixed(0)} req/s\n`,
      )
    }
  }

  // Twenty identical requests at once against twenty different ones: what the key costs under contention.
  const bursts: { duplicates: number; distinct: number; conflicts: number }[] = []
  for (let round = 0; round < (quick ? 10 : 30); round++) {
    const duplicates = await burst(service, apiKey, Array(20).fill(randomUUID()))
    const distinct = await burst(
      service,
      apiKey,
      Array.from({ length: 20 }, () => randomUUID()),
    )
    bursts.push({ duplicates: duplicates.ms, distinct: distinct.ms, conflicts: duplicates.conflicts })
  }

  console.log(
    report({
      samples,
      bursts,
      node: process.version,
      postgres: version,
      collation: args.collation ? `${args.collation} (ICU)` : 'C',
      cores: cpus().length,
      rounds,
      seconds,
    }),
  )
  if (args.statements) console.log(await statementCosts(sql))

  if (args.soak !== undefined) console.log(await soak(service, load, Number(args.soak || 5)))
  if (args.reaper !== undefined)
    console.log(await reaperUnderLoad({ sql, server: service, load, rows: Number(args.reaper || 1_000_000) }))
  if (args.large !== undefined) {
    const start = async (name: string, url: string) => {
      const server = await startServer(name, 'src/server.ts', { ...env, DATABASE_URL: url })
      servers.push(server)
      return server
    }
    const clusterUrl = `postgres://postgres:postgres@127.0.0.1:${cluster.port}/`
    console.log(
      await largeTable({
        sql,
        server: service,
        load,
        clusterUrl,
        rows: Number(args.large || 10_000_000),
        rounds: Math.max(rounds, 3),
        start,
      }),
    )
  }
} finally {
  await cleanUp()
}
