// Prometheus metrics (prom-client), in one registry: what an operator watches. Served on METRICS_PORT only
// (src/observability/metrics-server.ts), never on the API's port.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { Sql } from '../db/connect.js'

export const registry = new Registry()
collectDefaultMetrics({ register: registry })

const registers = [registry]

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP requests by route pattern, method and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers,
})

export const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests by route pattern, method and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers,
})

export type IdempotencyOutcome =
  | 'claimed'
  | 'taken_over'
  | 'replayed'
  | 'in_flight'
  | 'key_reused'
  | 'released'
  | 'lease_ended'
export const idempotencyOutcomes = new Counter({
  name: 'idempotency_outcomes_total',
  help:
    'Idempotency-Key outcomes: claimed (new), taken_over (expired or abandoned), replayed, in_flight (409), ' +
    'key_reused (422), released, lease_ended (after the processor call)',
  labelNames: ['endpoint', 'outcome'] as const,
  registers,
})

export const statementBatchSize = new Histogram({
  name: 'idempotency_statement_batch_size',
  help:
    'Requests that shared one statement and one commit: their key claims (claim), or their writes and key ' +
    'completions (commit)',
  labelNames: ['statement'] as const,
  buckets: [1, 2, 4, 8, 16, 32, 50],
  registers,
})

export const statementSplits = new Counter({
  name: 'idempotency_statement_splits_total',
  help:
    'Shared statements (claim, commit) that failed and were sent again one request at a time, by the error code: ' +
    'a request whose data was refused, or whose claim was taken over (IK409); a steady rate is a statement that ' +
    'cannot carry a batch',
  labelNames: ['statement', 'code'] as const,
  registers,
})

export const statementStalls = new Counter({
  name: 'idempotency_statement_stalls_total',
  help:
    'Shared statements (claim, commit) that had not answered within DATABASE_STATEMENT_TIMEOUT_MS: their connection ' +
    'went silent, and the requests behind them went on without them',
  labelNames: ['statement'] as const,
  registers,
})

export const processorCalls = new Histogram({
  name: 'processor_call_duration_seconds',
  help: 'Payment processor calls by operation and outcome (succeeded, declined, unavailable, error)',
  labelNames: ['operation', 'outcome'] as const,
  buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers,
})

export const reaperDeletedKeys = new Counter({
  name: 'reaper_deleted_keys_total',
  help: 'Expired idempotency keys deleted',
  registers,
})

export const recoveryClaims = new Counter({
  name: 'recovery_claims_total',
  help:
    'Abandoned claims the recovery worker handled: settled (outcome recorded), released (never seen downstream), ' +
    'failed (tried again later)',
  labelNames: ['result'] as const,
  registers,
})

export const settlementOverdueClaims = new Gauge({
  name: 'settlement_overdue_claims',
  help: 'Abandoned claims past their due time (lease end plus grace, with backoff) that no recovery run has taken yet',
  registers,
})

export const settlementOldestOverdueSeconds = new Gauge({
  name: 'settlement_oldest_overdue_seconds',
  help:
    'How long past its due time the oldest overdue abandoned claim is (0: none); above SETTLEMENT_BEHIND_SECONDS the ' +
    'worker is not ready',
  registers,
})

export const deadWorkerPools = new Counter({
  name: 'worker_dead_pools_total',
  help:
    'graphile-worker pools found dead (silent for WORKER_DEAD_AFTER_SECONDS while holding locks) whose jobs and ' +
    'queues were unlocked',
  registers,
})

export const orphanedWorkerLocks = new Counter({
  name: 'worker_orphaned_locks_total',
  help:
    "locks on jobs and queues that this process's live graphile-worker pools held without running the job (a " +
    'completion not recorded, a job taken whose answer was lost), freed',
  registers,
})

export const workerJobFailures = new Counter({
  name: 'worker_job_failures_total',
  help: 'graphile-worker jobs that failed (they are retried with backoff)',
  labelNames: ['task'] as const,
  registers,
})

export const balancesOverdrawn = new Counter({
  name: 'ledger_balances_overdrawn_total',
  help:
    'Times the processor took money on its own (a dispute) that left an account’s available balance below zero ' +
    '(paid out, or not available yet): money the account owes, which its next charges pay back first (docs/ledger.md)',
  labelNames: ['cause'] as const,
  registers,
})

export const balanceRolls = new Counter({
  name: 'ledger_balance_rolls_total',
  help:
    'Runs of the roll of settled balances (src/ledger/settled-balances.ts), by result: rolled, or held_back by a ' +
    'transaction whose start this role may not read that did not end in time (docs/ledger.md, Settled balances)',
  labelNames: ['result'] as const,
  registers,
})

export const payoutsApplied = new Counter({
  name: 'payouts_applied_total',
  help: "News of the processor's payouts applied to the ledger, by what it told (in_transit, paid, failed)",
  labelNames: ['status'] as const,
  registers,
})

export const processorEvents = new Counter({
  name: 'processor_events_total',
  help:
    "The processor's events received, by way in (webhook, reconciliation) and what became of them (applied, waiting, " +
    'ignored, duplicate)',
  labelNames: ['via', 'status'] as const,
  registers,
})

export const reconciliationDiscrepancies = new Gauge({
  name: 'reconciliation_discrepancies_open',
  help:
    'Disagreements between the books and the processor that the last comparison found and no later one resolved (npm ' +
    'run reconcile:report lists them)',
  registers,
})

export const workerJobLongestRunningSeconds = new Gauge({
  name: 'worker_job_longest_running_seconds',
  help: 'How long the longest job a worker of this process runs now has been running; over 120 s it is told as stuck',
  registers,
})

export const processorEventsWaiting = new Gauge({
  name: 'processor_events_waiting',
  help:
    "The processor's events that wait for their object to be recorded; one that waits for an hour is also a " +
    'discrepancy',
  registers,
})

const pools = new Set<Sql>()
new Gauge({
  name: 'db_pool_connections',
  help:
    'Database pool connections (connections: open, of which idle, leased to a transaction or reserved; opening), and ' +
    'queries waiting for one',
  labelNames: ['state'] as const,
  registers,
  collect() {
    this.reset()
    for (const pool of pools) {
      for (const [state, count] of Object.entries(poolStats(pool))) this.inc({ state }, count)
    }
  },
})

/** Reports `sql`'s pool on the db_pool_connections gauge. */
export function watchPool(sql: Sql): void {
  pools.add(sql)
}

function poolStats(sql: Sql): Record<string, number> {
  return { ...sql.stats }
}
