// npm run bench: what idempotency costs, as ratios measured side by side in one run (absolute times drift
// on shared machines; ratios hold). Requests go through app.inject against the configured database
// (DATABASE_URL, or the embedded one), as a new account named "bench".
import { randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { createAccount } from '../src/accounts/api-keys.js'
import { buildApp } from '../src/app.js'
import { createSimulatedProcessor } from '../src/processor/simulated.js'
import { loadConfig } from '../src/config.js'
import { openDatabase } from '../src/db/database.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300)
const config = loadConfig()
const database = await openDatabase(config)
const app = await buildApp({
  sql: database.sql,
  processor: createSimulatedProcessor({ sql: database.sql }),
  config: { ...config, RATE_LIMIT_MAX: 1_000_000 },
  log: pino({ level: 'silent' }),
})
const { api_key: apiKey } = await createAccount(database.sql, 'bench')
const body = JSON.stringify({ amount_cents: 1200, currency: 'usd', source: 'pm_card_visa' })
const post = (key: string) =>
  app.inject({ method: 'POST', url: '/v1/charges', payload: body, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': key } })

const replayKey = randomUUID()
const chargeId = (await post(replayKey)).json().id as string

const scenarios = {
  'new charge (claim, insert, completion)': () => post(randomUUID()),
  'replay of a completed key': () => post(replayKey),
  'GET /v1/charges/:id (baseline read)': () => app.inject({ method: 'GET', url: `/v1/charges/${chargeId}`, headers: { authorization: `Bearer ${apiKey}` } }),
}
const samples = new Map<string, number[]>(Object.keys(scenarios).map((name) => [name, []]))

for (let n = 0; n < 30; n++) for (const run of Object.values(scenarios)) await run() // warm-up
// Interleaved, so that any drift in the machine's speed hits every scenario alike.
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of Object.entries(scenarios)) {
    const started = process.hrtime.bigint()
    const response = await run()
    samples.get(name)!.push(Number(process.hrtime.bigint() - started) / 1e6)
    if (response.statusCode >= 300) throw new Error(`${name}: unexpected ${response.statusCode} ${response.body}`)
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const baseline = median(samples.get('new charge (claim, insert, completion)')!)
console.log(`${ROUNDS} interleaved rounds; median latency relative to a new charge:`)
for (const [name, values] of samples) console.log(`  ${(median(values) / baseline).toFixed(2)}x  ${name}`)

// Twenty identical requests at once against twenty different ones: what the key costs under contention.
const burst = async (keys: string[]) => {
  const started = process.hrtime.bigint()
  await Promise.all(keys.map(post))
  return Number(process.hrtime.bigint() - started) / 1e6
}
const duplicateBursts: number[] = []
const distinctBursts: number[] = []
for (let round = 0; round < 20; round++) {
  duplicateBursts.push(await burst(Array(20).fill(randomUUID())))
  distinctBursts.push(await burst(Array.from({ length: 20 }, () => randomUUID())))
}
console.log(`  ${(median(duplicateBursts) / median(distinctBursts)).toFixed(2)}x  20 parallel duplicates of one key, relative to 20 parallel distinct keys`)

await app.close()
await database.close()
