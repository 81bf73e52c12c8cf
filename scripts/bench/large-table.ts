// npm run bench -- --large[=rows]: new charges against a database whose idempotency_keys already holds `rows`
// live, completed keys (10M by default, random keys spread over the unique index), side by side with the
// benchmark's own small database: does a large table slow new charges down, or make each write more WAL?
import { createAccount } from '../../src/accounts/api-keys.js'
import { connect, type Sql } from '../../src/db/connect.js'
import { createDatabaseIfMissing } from '../../src/db/embedded.js'
import { migrate } from '../../src/db/migrate.js'
import { PATIENT } from './cluster.js'
import { measure, type LoadOptions, type Measurement } from './load.js'
import type { ServerUnderTest } from './processes.js'
import { median, spread } from './report.js'

const BATCH = 250_000

export interface LargeTableOptions {
  /** The benchmark's database (small), its server and its load. */
  sql: Sql
  server: ServerUnderTest
  load: LoadOptions
  /** postgres://…/ of the cluster, without a database name. */
  clusterUrl: string
  rows: number
  rounds: number
  start(name: string, databaseUrl: string): Promise<ServerUnderTest>
}

export async function largeTable(options: LargeTableOptions): Promise<string> {
  const { rows, rounds } = options
  const databaseUrl = `${options.clusterUrl}bench_large`
  await createDatabaseIfMissing(`${options.clusterUrl}postgres`, 'bench_large')
  const sql = connect(databaseUrl, { max: 2, statementTimeoutMs: 0, ...PATIENT })
  try {
    await migrate(databaseUrl, PATIENT)
    const { api_key: apiKey, account_id: accountId } = await createAccount(sql, 'bench-large')
    const started = performance.now()
    // Completed keys as the service leaves them: a real response body's size, expiring tomorrow.
    for (let from = 0; from < rows; from += BATCH) {
      await sql`
        insert into idempotency_keys (account_id, endpoint, key, fingerprint, operation_id, completed_at,
                                      response_status, response_headers, response_body, expires_at)
        select ${accountId}, 'POST /v1/charges', gen_random_uuid()::text, sha256(n::text::bytea), gen_random_uuid(),
          now(),
               201, '{"content-type":"application/json; charset=utf-8"}', convert_to(repeat('x', 600), 'UTF8'), now()
                 + interval '1 day'
        from generate_series(${from + 1}::int, ${Math.min(rows, from + BATCH)}::int) n`
      process.stderr.write(`  large table: ${Math.min(rows, from + BATCH)} of ${rows} keys\r`)
    }
    await sql`vacuum analyze idempotency_keys`
    await sql`checkpoint`
    const fillSeconds = (performance.now() - started) / 1000
    process.stderr.write(`\n  large table: filled in ${fillSeconds.toFixed(0)} s\n`)

    const large = await options.start('large table', databaseUrl)
    try {
      const largeLoad: LoadOptions = { ...options.load, apiKey }
      await measure(large, { ...largeLoad, seconds: 2 })
      const samples: { small: Measurement; large: Measurement }[] = []
      for (let round = 0; round < rounds; round++) {
        const pair = round % 2 === 0 ? (['small', 'large'] as const) : (['large', 'small'] as const)
        const sample: Partial<(typeof samples)[number]> = {}
        for (const which of pair) {
          sample[which] =
            which === 'small' ? await measure(options.server, options.load) : await measure(large, largeLoad)
          process.stderr.write(
            `  large table round ${round + 1}/${rounds} ${which.padEnd(5)} ${sample[which]!.rps.toFixed(0)} req/s\n`,
          )
        }
        samples.push(sample as (typeof samples)[number])
      }
      const [smallKeys, largeKeys] = [await keyCount(options.sql), await keyCount(sql)]
      const ratios = samples.map((sample) => sample.large.rps / sample.small.rps)
      const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length
      const wal = (which: 'small' | 'large') => mean(samples.map((sample) => sample[which].walBytes)) / 1024
      return [
        '',
        `Large table: new charges against about ${largeKeys.toLocaleString('en')} stored keys (filled in ` +
          `${fillSeconds.toFixed(0)} s) and against about ${smallKeys.toLocaleString('en')}, ${rounds} interleaved ` +
          `rounds:`,
        `  req/s ` +
          `${samples.map((sample) => `${sample.large.rps.toFixed(0)} / ${sample.small.rps.toFixed(0)}`).join(', ')}; ` +
          `WAL per request ${wal('large').toFixed(1)} KB / ${wal('small').toFixed(1)} KB`,
        `  ${median(ratios) >= 0.9 ? 'ok  ' : 'MISS'} new charge, large table / small table: ${spread(ratios)}   ` +
          `goal: flat (>= 0.9x)`,
      ].join('\n')
    } finally {
      await large.stop()
    }
  } finally {
    await sql.end({ timeout: 1 })
  }
}

/** The planner's estimate of the keys stored: counting ten million rows would take longer than a round. */
async function keyCount(sql: Sql): Promise<number> {
  const [{ rows }] = (await sql<
    { rows: number }[]
  >`select reltuples::bigint::float8 as rows from pg_class where relname = 'idempotency_keys'`) as unknown as [
    { rows: number },
  ]
  return rows
}
