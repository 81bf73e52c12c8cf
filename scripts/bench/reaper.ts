// npm run bench -- --reaper[=rows]: a backlog of expired keys (1M by default) reaped while new charges keep
// coming: does reaping keep pace with the peak new-charge rate, and what does it cost the charges' p99?
import type { Sql } from '../../src/db/connect.js'
import { REAP_TASK } from '../../src/idempotency/reap-expired-keys.js'
import { measure, type LoadOptions } from './load.js'
import type { ServerUnderTest } from './processes.js'

export async function reaperUnderLoad(options: {
  sql: Sql
  server: ServerUnderTest
  load: LoadOptions
  rows: number
}): Promise<string> {
  const { sql, server, load, rows } = options
  const [account] = await sql<{ id: string }[]>`select id from accounts limit 1`
  for (let start = 0; start < rows; start += 100_000) {
    await sql`
      insert into idempotency_keys (account_id, endpoint, key, fingerprint, operation_id, completed_at,
                                    response_status, response_headers, response_body, created_at, expires_at)
      select ${account!.id}, 'POST /v1/charges', 'backlog-' || n, decode(md5(n::text) || md5(n::text), 'hex'),
        gen_random_uuid(),
             now() - interval '2 days', 201, '{}', '\\x7b7d'::bytea, now() - interval '2 days', now() - interval '1 day'
      from generate_series(${start + 1}::int, ${Math.min(rows, start + 100_000)}::int) n`
  }
  await sql`vacuum analyze idempotency_keys`
  process.stderr.write(`  reaper: ${rows} expired keys in the backlog\n`)

  const before = await measure(server, load)
  // The service's own reaper, woken now (its queue keeps it from running twice alongside the scheduled one).
  const started = performance.now()
  await sql`select graphile_worker.add_job(${REAP_TASK}, '{}'::json, queue_name => ${REAP_TASK})`
  const during: { rps: number; p99: number }[] = []
  const left = async () =>
    (await sql<{ count: number }[]>`select count(*)::int as count from idempotency_keys where expires_at <= now()`)[0]!
      .count
  while ((await left()) > 0 && during.length < 120) during.push(await measure(server, load))
  const reapSeconds = (performance.now() - started) / 1000
  const deleted = rows - (await left())
  const p99During = Math.max(...during.map((sample) => sample.p99))
  const rate = deleted / reapSeconds
  return [
    '',
    `Reaper (the service's own, paced): ${deleted} expired keys deleted in ${reapSeconds.toFixed(1)} s ` +
      `(${rate.toFixed(0)} rows/s) while new charges ran;`,
    `  new charges alone: ${before.rps.toFixed(0)} req/s, p99 ${before.p99.toFixed(1)} ms; during reaping: p99 ` +
      `${during.map((s) => s.p99.toFixed(1)).join(', ')} ms`,
    `  ${rate >= before.rps ? 'ok  ' : 'MISS'} reaping rate / new-charge rate: ${(rate / before.rps).toFixed(2)}x  ` +
      ` goal >= 1x`,
    `  ${p99During / before.p99 < 1.25 ? 'ok  ' : 'MISS'} worst p99 while reaping / p99 alone: ` +
      `${(p99During / before.p99).toFixed(2)}x   goal < 1.25x`,
  ].join('\n')
}
