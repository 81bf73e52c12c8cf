// A job that runs far longer than any task may (one that waits on something without a bound) holds its lock and
// its queue's: the watchdog says so, once, naming the job and its task, and reports the longest run on a metric.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { registry } from '../../src/observability/metrics.js'
import { startWatchdog } from '../../src/worker/watchdog.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { warnLines } from '../helpers/log-lines.js'
import { until } from '../helpers/system.js'

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase()
})
afterAll(() => database?.drop())

it('when a job has run longer than the bound, then the watchdog logs it once at error with its task, and the metric shows how long', async () => {
  const { log: warnLog, lines } = warnLines()
  const since = Date.now() - 5_000
  const watchdog = await startWatchdog(
    database.sql,
    { ids: () => ['pool-stuck-test'], running: () => [{ id: '42', task: 'recover_abandoned_claims', since }] },
    {
      deadAfterSeconds: 3,
      behindAfterSeconds: 180,
      graceSeconds: 3,
      processName: 'test',
      stuckAfterSeconds: 2,
    },
    warnLog,
  )
  try {
    // A second check, a second later: told once all the same.
    await until(async () =>
      (await registry.getSingleMetricAsString('worker_job_longest_running_seconds')).includes(' 6'),
    )
    const told = lines.filter((line) =>
      String(line.msg).startsWith('job 42 (recover_abandoned_claims) has run for over 2 s'),
    )
    expect(told).toHaveLength(1)
    expect(told[0]).toMatchObject({ level: 50, job: '42', task: 'recover_abandoned_claims' })
  } finally {
    await watchdog.stop()
  }
})
