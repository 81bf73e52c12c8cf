// npm run bench:sweep [-- --rows=1000000] [-- --rounds=5]: what one run of the webhook sweep costs on a large
// webhook_deliveries table, side by side with the sweep it replaced (one read of every due pending delivery
// through an index on next_attempt_at, filtered, up to 1,000 wake-ups without job keys), and on a small table.
// Deliveries are spread as a busy service leaves them: most delivered, some backing off, a backlog due behind
// endpoints that send one at a time, a few held by live senders, a few leases run out.
// Figures: the read's milliseconds and buffers (EXPLAIN ANALYZE), and the jobs queued by ten runs with no sender.
import { parseArgs } from 'node:util'
import type { Sql, Transaction } from '../../src/db/connect.js'
import { overdueDeliveries, SWEEP_BATCH } from '../../src/webhooks/sweep.js'
import { startBenchCluster } from './cluster.js'
import { median, spread } from './report.js'

const { values: args } = parseArgs({
  options: { rows: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '5' } },
})
const rows = Number(args.rows)
const rounds = Number(args.rounds)
const OVERDUE_SECONDS = 10

/** The sweep before db/migrations/0013, as it was, with the index it read. */
const OLD_INDEX = `create index if not exists webhook_deliveries_due on webhook_deliveries (next_attempt_at)
  where status = 'pending'`
const oldSweep = (sql: Sql | Transaction) => sql`
  select graphile_worker.add_job('deliver_webhook', json_build_object('delivery_id', id))
  from webhook_deliveries
  where status = 'pending' and next_attempt_at <= now()
    and (locked_until <= now() or (locked_until is null and next_attempt_at <= now() - ${OVERDUE_SECONDS} * interval
      '1 second'))
  limit 1000`
const newSweep = (sql: Sql | Transaction) => sql`
  with overdue as (${overdueDeliveries(sql, OVERDUE_SECONDS, SWEEP_BATCH)})
  select graphile_worker.add_job('deliver_webhook', json_build_object('delivery_id', id), job_key => 'deliver:' || id,
    job_key_mode => 'preserve_run_at')
  from overdue`

/** Fills webhook_deliveries (and the events they deliver) with `count` rows spread as a busy service leaves them. */
async function fill(sql: Sql, accountId: string, count: number): Promise<void> {
  const endpoints = 200
  await sql`
    insert into webhook_endpoints (id, account_id, url, enabled_events, secret)
    select 'we_' || lpad(to_hex(n), 24, '0'), ${accountId}, 'https://hooks.example.com/' || n, '{*}', 'whsec_bench'
    from generate_series(1, ${endpoints}) n`
  // Events first, with the fan-out off: the deliveries below are written as the sender leaves them.
  await sql`alter table events disable trigger events_fan_out`
  for (let from = 0; from < count; from += 250_000) {
    const to = Math.min(count, from + 250_000)
    await sql`
      insert into events (id, account_id, type, body, created_at)
      select 'evt_' || lpad(to_hex(n), 24, '0'), ${accountId}, 'charge.succeeded', '{}', now() - interval '1 day'
      from generate_series(${from + 1}::int, ${to}::int) n`
    // Per 10,000: 9,000 delivered, 600 backing off, 300 due behind a busy endpoint (overdue), 50 just due,
    // 20 held by live senders, 30 whose sender died (lease run out).
    await sql`
      insert into webhook_deliveries (id, event_id, endpoint_id, account_id, status, attempts, next_attempt_at,
        locked_until, delivered_at)
      select 'wd_' || lpad(to_hex(n), 24, '0'), 'evt_' || lpad(to_hex(n), 24, '0'), 'we_' || lpad(to_hex(1 + n %
        ${endpoints}), 24, '0'), ${accountId},
             case when k < 9000 then 'delivered' else 'pending' end, 1,
             case when k < 9000 then now() - interval '1 day'
                  when k < 9600 then now() + (k % 3600) * interval '1 second'
                  when k < 9900 then now() - (60 + k % 3600) * interval '1 second'
                  when k < 9950 then now() - interval '2 seconds'
                  else now() - interval '5 minutes' end,
             case when k >= 9950 and k < 9970 then now() + interval '30 seconds'
                  when k >= 9970 then now() - (k % 600) * interval '1 second' end,
             case when k < 9000 then now() - interval '1 day' end
      from generate_series(${from + 1}::int, ${to}::int) n, lateral (select n % 10000 as k) s`
    process.stderr.write(`  sweep bench: ${to} of ${count} deliveries\r`)
  }
  await sql`alter table events enable trigger events_fan_out`
  await sql`vacuum analyze webhook_deliveries`
  process.stderr.write('\n')
}

/** The read alone (EXPLAIN ANALYZE of the ids it would wake): milliseconds and shared buffers touched. */
async function read(sql: Sql, which: 'before' | 'now'): Promise<{ ms: number; buffers: number }> {
  const ids =
    which === 'before'
      ? sql`
          select id from webhook_deliveries
          where status = 'pending' and next_attempt_at <= now()
            and (locked_until <= now() or (locked_until is null and next_attempt_at <= now() - ${OVERDUE_SECONDS} *
              interval '1 second'))
          limit 1000`
      : overdueDeliveries(sql, OVERDUE_SECONDS, SWEEP_BATCH)
  const plan = (await sql<{ 'QUERY PLAN': string }[]>`explain (analyze, buffers) ${ids}`).map(
    (row) => row['QUERY PLAN'],
  )
  const buffers = [...(plan.find((line) => /Buffers:/.test(line)) ?? '').matchAll(/(?:hit|read)=(\d+)/g)].reduce(
    (sum, match) => sum + Number(match[1]),
    0,
  )
  return { ms: Number(/Execution Time: ([\d.]+)/.exec(plan.join('\n'))?.[1] ?? Number.NaN), buffers }
}

/**
 * `runs` sweeps a minute apart with no sender running (a backlog the worker has not reached): jobs queued, last run's
 * ms.
 */
async function repeated(sql: Sql, sweep: typeof oldSweep, runs: number): Promise<{ jobs: number; lastMs: number }> {
  await sql`delete from graphile_worker._private_jobs`
  let lastMs = 0
  for (let run = 0; run < runs; run++) {
    const started = performance.now()
    await sweep(sql)
    lastMs = performance.now() - started
  }
  const [{ jobs }] = (await sql<
    { jobs: number }[]
  >`select count(*)::int as jobs from graphile_worker._private_jobs`) as unknown as [{ jobs: number }]
  await sql`delete from graphile_worker._private_jobs`
  return { jobs, lastMs }
}

const cluster = await startBenchCluster()
try {
  const large = await cluster.database('bench_sweep_large')
  const small = await cluster.database('bench_sweep_small')
  const [largeAccount] = await large.sql<{ id: string }[]>`select id from accounts limit 1`
  const [smallAccount] = await small.sql<{ id: string }[]>`select id from accounts limit 1`
  await fill(large.sql, largeAccount!.id, rows)
  await fill(small.sql, smallAccount!.id, 10_000)
  for (const db of [large.sql, small.sql]) await db.unsafe(OLD_INDEX)

  const reads: Record<'beforeLarge' | 'nowLarge' | 'nowSmall', { ms: number; buffers: number }[]> = {
    beforeLarge: [],
    nowLarge: [],
    nowSmall: [],
  }
  for (let round = 0; round < rounds; round++) {
    reads.beforeLarge.push(await read(large.sql, 'before'))
    reads.nowLarge.push(await read(large.sql, 'now'))
    reads.nowSmall.push(await read(small.sql, 'now'))
  }
  const runs = 10
  const before = await repeated(large.sql, oldSweep, runs)
  const now = await repeated(large.sql, newSweep, runs)

  const line = (label: string, samples: { ms: number; buffers: number }[]) =>
    `  ${label.padEnd(48)} ${median(samples.map((s) => s.ms))
      .toFixed(2)
      .padStart(8)} ms ${String(median(samples.map((s) => s.buffers))).padStart(8)} buffers`
  const ratio = (a: { ms: number }[], b: { ms: number }[]) => spread(a.map((sample, index) => sample.ms / b[index]!.ms))
  console.log(
    [
      `Webhook sweep on ${rows.toLocaleString('en')} deliveries (${rounds} rounds; docs/measure.md):`,
      'Its read (EXPLAIN ANALYZE), median:',
      line('before 0013: every due pending row, filtered', reads.beforeLarge),
      line(`now: two partial indexes, at most ${SWEEP_BATCH}`, reads.nowLarge),
      line('now, on 10,000 deliveries', reads.nowSmall),
      `  now / before: ${ratio(reads.nowLarge, reads.beforeLarge)}; ${rows.toLocaleString('en')} rows / 10,000 ` +
        `rows: ${ratio(reads.nowLarge, reads.nowSmall)}`,
      `${runs} runs a minute apart, no sender running (the backlog not reached yet):`,
      `  before 0013: ${before.jobs.toLocaleString('en')} jobs queued, last run ${before.lastMs.toFixed(0)} ms`,
      `  now:         ${now.jobs.toLocaleString('en')} jobs queued, last run ${now.lastMs.toFixed(0)} ms (a job ` +
        `key per delivery)`,
    ].join('\n'),
  )
} finally {
  await cluster.stop()
}
