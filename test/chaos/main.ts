// `npm run test:chaos`: every fault at once. A pg_auto_failover formation (primary and synchronous standby, a
// proxy in front of each node, PgBouncer), two services on it (the simulated processor: two API instances, one of
// them through PgBouncer, and two workers; the Stripe processor against the Stripe-compatible test server: an API
// instance and a worker), retrying clients, and a nemesis on a seeded schedule. When the faults stop, everything
// is healed and left to settle, then the history and the books are judged (checker.ts). Prints the seed, the
// schedule, the figures and every violated property with its operations; exits 1 on any violation.
//   npm run test:chaos -- [--seed=N ...] [--seconds=60] [--clients=12] [--settle-seconds=180]
// Each --seed (a number, or `fresh` for a new one) draws `seconds` of faults, one after the other; none: one fresh.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createAccount } from '../../src/accounts/api-keys.js'
import { createClient } from '../../src/client/index.js'
import { connect, type Sql } from '../../src/db/connect.js'
import { startFormation, type Formation } from '../helpers/auto-failover.js'
import { STRIPE_WEBHOOK_SECRET } from '../helpers/processors.js'
import { startStripeServer, type StripeTestServer } from '../helpers/stripe/server.js'
import { until } from '../helpers/system.js'
import { check, type Violations } from './checker.js'
import { startClients, type ClientRun, type ClientSetup } from './clients.js'
import { describe, drawSchedule, runNemesis } from './nemesis.js'
import { seeded } from './random.js'
import { watchReadiness } from './readiness.js'
import { startStack, type Stack } from './stack.js'
import { startDatabaseProxy, type DatabaseProxy } from './tcp-proxies.js'

const { values: args } = parseArgs({
  options: {
    seed: { type: 'string', multiple: true },
    seconds: { type: 'string', default: '60' },
    clients: { type: 'string', default: '12' },
    'settle-seconds': { type: 'string', default: '180' },
  },
})
const seeds = (args.seed ?? ['fresh']).map((seed) => (seed === 'fresh' ? randomBytes(4).readUInt32BE() : Number(seed)))
const again = seeds.map((seed) => `--seed=${seed}`).join(' ')
const seconds = Number(args.seconds)
const settleMs = Number(args['settle-seconds']) * 1000
// The clients' choices and the front's come from the first seed; each seed draws its own part of the schedule.
const random = seeded(seeds[0]!)
const log = (line: string) => console.log(`[chaos] ${line}`)

/** Settings that make the boundaries short enough to cross in a minute: the lease, the grace, the deadlines. */
const SHORT_BOUNDS = {
  IDEMPOTENCY_LEASE_SECONDS: '5',
  REQUEST_TIMEOUT_MS: '4000',
  PROCESSOR_TIMEOUT_MS: '2500',
  RECOVERY_GRACE_SECONDS: '3',
  // A start-up hung on a quiet connection ends in time to be started again before the run checks readiness.
  STARTUP_TIMEOUT_SECONDS: '90',
  WORKER_DEAD_AFTER_SECONDS: '5',
  SIMULATED_SLOW_MS: '3000',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '1,2,4,8,15,30',
  LOG_LEVEL: 'info',
}

/**
 * Each node takes 100 connections, 3 of them kept for superusers (pg_autoctl's keeper, this harness). A worker
 * process opens up to DATABASE_POOL_SIZE + WORKER_CONCURRENCY + 2 + 5 (docs/operations.md), an API process
 * DATABASE_POOL_SIZE: 8 + 8 (one through PgBouncer) + 2 x 19 + 8 + 19 = 81 here, and the harness 5. With the
 * defaults the six processes could open 118, and a long run did: the primary refused its own keeper.
 */
const CONNECTION_BUDGET = { DATABASE_POOL_SIZE: '8', WORKER_CONCURRENCY: '4' }

interface Service {
  stack: Stack
  sql: Sql
  accountId: string
  apiKey: string
  delivered: Set<string>
  receiver: Server
  stripe: StripeTestServer | undefined
  clients?: ClientRun
}

let formation: Formation | undefined
const proxies: DatabaseProxy[] = []
const services: Service[] = []
const bouncerPorts: number[] = []

async function main(): Promise<number> {
  log(`seeds ${seeds.join(', ')} (run again with ${again}), ${seconds * seeds.length} s of faults`)
  formation = await startFormation()
  await formation.shortenFailover()
  for (const node of formation.nodes) proxies.push(await startDatabaseProxy(node.port))
  const query = formation.uri.split('?')[1]
  const urlOf = (database: string, role = 'payments') =>
    `postgres://${role}@${proxies.map((proxy) => `127.0.0.1:${proxy.port}`).join(',')}/${database}?${query}`
  // The services connect as a role of their own, as docs/high-availability.md does, not as a superuser: the slots
  // PostgreSQL keeps for superusers stay free for pg_autoctl and for the checker, however many the services take.
  const admin = connect(urlOf('payments', 'postgres'), { max: 1 })
  await admin`create role payments login`
  await admin`alter database payments owner to payments`
  await admin`create database payments_stripe owner payments`
  // Through PgBouncer the service cannot set its timeouts per connection: the role has them
  // (docs/high-availability.md).
  await admin`alter role payments in database payments set statement_timeout = '3s'`
  await admin`alter role payments in database payments set idle_in_transaction_session_timeout = '60s'`
  await admin.end({ timeout: 1 })
  const bouncers = (await formation.startPgBouncers()).replace('postgres://', 'postgres://payments@')
  bouncerPorts.push(...[...bouncers.matchAll(/127\.0\.0\.1:(\d+)/g)].map((match) => Number(match[1])))

  const stripe = await startStripeServer({ searchLagMs: 60_000 })
  const simulatedEnv = { ...SHORT_BOUNDS, ...CONNECTION_BUDGET, DATABASE_URL: urlOf('payments') }
  const stripeEnv = {
    ...SHORT_BOUNDS,
    ...CONNECTION_BUDGET,
    DATABASE_URL: urlOf('payments_stripe'),
    PROCESSOR: 'stripe',
    STRIPE_SECRET_KEY: stripe.secretKey,
    STRIPE_API_URL: stripe.url,
    STRIPE_WEBHOOK_SECRET,
  }
  services.push(
    await startService(
      'simulated',
      [
        { name: 'sim-api-1', role: 'api', env: simulatedEnv },
        {
          name: 'sim-api-2',
          role: 'api',
          env: { ...simulatedEnv, DATABASE_URL: bouncers, DATABASE_TRANSACTION_POOLING: 'true' },
        },
        { name: 'sim-worker-1', role: 'worker', env: simulatedEnv },
        { name: 'sim-worker-2', role: 'worker', env: simulatedEnv },
      ],
      urlOf('payments', 'postgres'),
      undefined,
    ),
  )
  services.push(
    await startService(
      'stripe',
      [
        { name: 'stripe-api-1', role: 'api', env: stripeEnv },
        { name: 'stripe-worker-1', role: 'worker', env: stripeEnv },
      ],
      urlOf('payments_stripe', 'postgres'),
      stripe,
    ),
  )
  stripe.webhooks.endpoint(`${services[1]!.stack.front.url}/processor/webhooks`, STRIPE_WEBHOOK_SECRET)

  const processes = services.flatMap((service) => service.stack.members.map((member) => member.name))
  const schedule = seeds.flatMap((seed, index) =>
    drawSchedule(seeded(seed), seconds * 1000, processes, true).map(({ atMs, fault }) => ({
      atMs: atMs + index * seconds * 1000,
      fault,
    })),
  )
  log(
    `schedule (${schedule.length} ` +
      `faults):\n${schedule.map(({ atMs, fault }) => `  +${(atMs / 1000).toFixed(1)}s ${describe(fault)}`).join('\n')}`,
  )

  const clientRandom = random.fork()
  const SOURCES: Record<string, ClientSetup['sources']> = {
    simulated: {
      succeed: ['pm_card_visa', 'pm_card_mastercard'],
      decline: ['pm_card_chargeDeclined'],
      actUp: ['pm_card_slow', 'pm_card_responseLost', 'pm_card_timeoutBeforeCharge'],
      downForGood: ['pm_card_processorDown'],
    },
    stripe: {
      succeed: ['pm_card_visa', 'pm_card_mastercard'],
      decline: ['pm_card_chargeDeclined', 'pm_card_chargeDeclinedInsufficientFunds'],
      actUp: [],
      downForGood: [],
    },
  }
  const clientCount = Number(args.clients)
  for (const service of services) {
    const share = service.stripe ? Math.ceil(clientCount / 3) : clientCount - Math.ceil(clientCount / 3)
    service.clients = startClients(
      {
        stack: service.stack.name,
        baseUrl: service.stack.front.url,
        apiKey: service.apiKey,
        clients: share,
        sources: SOURCES[service.stack.name]!,
      },
      clientRandom.fork(),
    )
  }
  const target = { formation, proxies, stacks: services.map((service) => service.stack), stripe }
  // A failover's own blip (the old primary gone, the new one not yet promoted) is not a readiness failure.
  const readiness = watchReadiness(
    services.map((service) => ({ stack: service.stack, apiKey: service.apiKey })),
    15_000,
  )
  const nemesis = runNemesis(schedule, target, log)
  await nemesis.done
  const lastFaultAt = nemesis.lastFaultAt
  log('faults over: healing')

  // Healed: the formation has its primary and standby, every process runs and is ready, Stripe acts normally.
  stripe.clearFaults()
  await formation.settled(180_000)
  await Promise.all(services.map((service) => service.stack.heal(120_000)))
  readiness.stop()
  await Promise.all(services.map((service) => service.clients!.stop(settleMs)))
  // Settled: no key in flight, every event delivered, the processor's webhooks applied.
  const settled = await Promise.all(services.map((service) => untilSettled(service, lastFaultAt + settleMs)))
  const settledAfterMs = Math.max(...settled) - lastFaultAt
  for (const [index, service] of services.entries()) {
    if (settled[index]! >= lastFaultAt + settleMs)
      log(
        `${service.stack.name} did not settle: ` +
          `${await unsettled(service).catch((error: unknown) => String(error))}\n${bouncersNow()}`,
      )
  }

  // The processor pays everything out (docs/ledger.md, "Payouts"); the checker holds each payout to the books.
  for (const service of services) await payOutEverything(service)
  // Each payout is an event of every account it carried money of: delivered like the others before the check.
  await Promise.all(services.map((service) => untilSettled(service, Date.now() + 120_000)))

  const violations: Violations = new Map()
  for (const service of services) {
    await check(
      {
        stack: service.stack.name,
        sql: service.sql,
        accountId: service.accountId,
        operations: service.clients!.operations,
        stripe: service.stripe,
        delivered: service.delivered,
      },
      violations,
    )
  }
  if (readiness.violations.length)
    violations.set('readiness said "not ready" whenever a process could not serve', readiness.violations)
  log(`readiness: ${readiness.probes} probes`)
  report(nemesis.injected, nemesis.skipped, settledAfterMs, violations)
  return violations.size === 0 ? 0 : 1
}

async function startService(
  name: string,
  members: Parameters<typeof startStack>[1],
  databaseUrl: string,
  stripe: StripeTestServer | undefined,
): Promise<Service> {
  const stack = await startStack(name, members, random.fork())
  const sql = connect(databaseUrl, { max: 2 })
  const { api_key: apiKey, account_id: accountId } = await createAccount(sql, `Chaos ${name}`)
  const delivered = new Set<string>()
  const receiver = createServer((request, response) => {
    delivered.add(String(request.headers['webhook-id']))
    request.resume().on('end', () => response.end())
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  const api = createClient({ baseUrl: stack.front.url, apiKey })
  await api.webhookEndpoints.create({
    url: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`,
    enabled_events: ['*'],
  })
  return { stack, sql, accountId, apiKey, delivered, receiver, stripe }
}

/**
 * The processor's schedule, on cue: a payout of everything it holds for the service (available by a month from now),
 * paid; resolves once the service has applied its news with what it carries (by webhook, or the list it reads).
 */
async function payOutEverything(service: Service): Promise<void> {
  const availableBy = new Date(Date.now() + 30 * 86_400_000)
  let reference: string | undefined
  if (service.stripe) {
    reference = service.stripe.later.payOut({ availableBy })?.id
    if (reference) service.stripe.later.settlePayout(reference, 'paid')
  } else {
    const control = (path: string, body: object = {}) =>
      fetch(`${service.stack.front.url}/simulated-processor${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    const made = await control('/payouts', { available_by: availableBy.toISOString() })
    if (made.status === 200)
      reference = ((await made.json()) as { changes: { reference: string }[] }).changes[0]?.reference
    if (reference) await control(`/payouts/${reference}/paid`)
  }
  if (!reference) return log(`${service.stack.name}: nothing to pay out`)
  const applied = async () =>
    (
      await service.sql`select 1 from processor_events where type = 'payout.paid' and status = 'applied' and
        changes @> ${service.sql.json([{ reference }] as never)}`
    ).length > 0
  await until(applied, 120_000).catch(() => log(`${service.stack.name}: payout ${reference} not applied in 120 s`))
  log(`${service.stack.name}: paid out ${reference}`)
}

/** Resolves with the time everything of the service had settled, or the deadline if it never did. */
async function untilSettled(service: Service, deadline: number): Promise<number> {
  const { sql, accountId } = service
  const settled = async () => {
    try {
      const [row] = await sql<{ keys: number; deliveries: number; pending: number }[]>`
        select (select count(*) from idempotency_keys where account_id = ${accountId} and completed_at is null)::int
          as keys,
               (select count(*) from webhook_deliveries where account_id = ${accountId} and status <>
                 'delivered')::int as deliveries,
               (select count(*) from charges where account_id = ${accountId} and (pending_operation is not null or
                 amount_refund_pending_cents > 0))::int as pending`
      const [events] = await sql<
        { count: number }[]
      >`select count(*)::int as count from events where account_id = ${accountId}`
      const idle = service.stripe
        ? await Promise.race([service.stripe.webhooks.idle().then(() => true), sleep(100).then(() => false)])
        : true
      return (
        row!.keys === 0 &&
        row!.deliveries === 0 &&
        row!.pending === 0 &&
        service.delivered.size >= events!.count &&
        idle
      )
    } catch {
      return false
    }
  }
  await until(settled, Math.max(1000, deadline - Date.now())).catch(() => {})
  return Date.now()
}

function report(
  injected: Record<string, number>,
  skipped: Record<string, number>,
  settledAfterMs: number,
  violations: Violations,
): void {
  const operations = services.flatMap((service) => service.clients!.operations)
  const attempts = operations.flatMap((operation) => operation.attempts)
  const tally = (labels: string[]) => {
    const counts: Record<string, number> = {}
    for (const label of labels) counts[label] = (counts[label] ?? 0) + 1
    return JSON.stringify(counts)
  }
  const members = services.flatMap((service) => service.stack.members)
  log(`seeds: ${again}`)
  log(
    `history: ${operations.length} operations, ${attempts.length} requests; answers ` +
      `${tally(attempts.map((attempt) => String(attempt.status ?? 'none')))}`,
  )
  log(`operations: ${tally(operations.map((operation) => `${operation.stack} ${operation.kind} ${operation.end}`))}`)
  log(`faults injected: ${JSON.stringify(injected)}; skipped (a topology change under way): ${JSON.stringify(skipped)}`)
  log(
    `processes: start-ups that failed ${members.reduce((sum, member) => sum + member.failedStarts.length, 0)}, ` +
      `exits of their own ${members.reduce((sum, member) => sum + member.ownExits.length, 0)}`,
  )
  for (const member of members)
    for (const output of [...member.failedStarts, ...member.ownExits].slice(0, 2))
      log(`${member.name}: ${output.split('\n').filter(Boolean).slice(-20).join(' | ')}`)
  log(`settled ${(settledAfterMs / 1000).toFixed(1)} s after the last fault`)
  if (violations.size === 0) {
    log('violations: none')
    return
  }
  log(`VIOLATIONS: ${violations.size} properties`)
  for (const [property, details] of violations) {
    log(`  ${property} (${details.length}):`)
    for (const detail of details.slice(0, 10)) log(`    ${detail}`)
  }
}

async function shutDown(): Promise<void> {
  for (const service of services) {
    await service.stack.close()
    service.receiver.close()
    await service.sql.end({ timeout: 1 }).catch(() => {})
    await service.stripe?.close()
  }
  for (const proxy of proxies) await proxy.close()
  await formation?.destroy()
}

/** What a service left unsettled: keys still in flight, and the background jobs that should settle them. */
async function unsettled({ sql, accountId }: Service): Promise<string> {
  const keys = await sql`
    select endpoint, key, operation_id, claim_token is not null as claimed, recovery_attempts, locked_until - now() as
      lease_left, now() - created_at as age
    from idempotency_keys where account_id = ${accountId} and completed_at is null order by created_at limit 5`
  const jobs = await sql`
    select task_identifier, queue_name, locked_by, now() - locked_at as locked_for, attempts, last_error, run_at -
      now() as due_in
    from graphile_worker.jobs order by run_at limit 10`
  const queues = await sql`
    select queue_name, locked_by, now() - locked_at as locked_for from graphile_worker._private_job_queues where
      locked_by is not null`
  const pools =
    await sql`select pool_id, process, now() - seen_at as silent_for from worker_heartbeats order by seen_at desc`
  return JSON.stringify({ keys, jobs, queues, pools })
}

/**
 * Writes everything each process printed, one file per member, and says where: the first place to look after a failure.
 */
function writeProcessLogs(): void {
  const members = services.flatMap((service) => service.stack.members)
  if (members.length === 0) return
  const directory = mkdtempSync(join(tmpdir(), `chaos-${seeds[0]}-`))
  if (formation) writeFileSync(join(directory, 'formation.log'), formation.logs())
  for (const member of members) {
    writeFileSync(
      join(directory, `${member.name}.log`),
      [...member.endedOutputs, member.process?.output() ?? member.starting?.() ?? ''].join(
        '\n---- (the process ended; the next one) ----\n',
      ),
    )
  }
  log(`every process's output: ${directory}`)
}

/** What each PgBouncer holds now (its pools, server and client connections): where a pooled process's queries wait. */
function bouncersNow(): string {
  return bouncerPorts
    .map((port) => {
      const show = (what: string) =>
        spawnSync(
          'psql',
          ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-AX', '-c', `show ${what}`, 'pgbouncer'],
          { encoding: 'utf8', timeout: 5000 },
        )
      return `pgbouncer :${port}\n${['pools', 'servers', 'clients']
        .map((what) => {
          const shown = show(what)
          return shown.stdout || shown.stderr
        })
        .join('')}`
    })
    .join('\n')
}

/** Each node's backends by role, database and application: what took the slots when a run cannot complete. */
async function connectionsNow(formation: Formation): Promise<string> {
  const lines: string[] = []
  for (const node of formation.nodes) {
    const sql = connect(`postgres://postgres@127.0.0.1:${node.port}/payments?sslmode=require`, { max: 1 })
    const rows = await sql<
      { usename: string | null; datname: string | null; application_name: string; count: number }[]
    >`
      select usename, datname, application_name, count(*)::int as count from pg_stat_activity
      where backend_type = 'client backend' group by 1, 2, 3 order by 4 desc`.finally(() => sql.end({ timeout: 1 }))
    lines.push(
      `${node.name}: ` +
        `${rows.map((row) => `${row.count} ${row.usename}/${row.datname}/${row.application_name || '-'}`).join(', ')}`,
    )
  }
  return lines.join('; ')
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let code = 1
try {
  code = await main()
} catch (error) {
  log(`the run could not complete: ${(error as Error).stack}`)
  if (formation) log(formation.logs().slice(-3000))
  if (formation) log(`connections now: ${await connectionsNow(formation).catch((cause: unknown) => String(cause))}`)
  log(bouncersNow())
} finally {
  writeProcessLogs()
  await shutDown().catch((error: unknown) => log(`shutting down: ${String(error)}`))
}
process.exit(code)
