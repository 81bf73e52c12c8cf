// Settled balances (db/migrations/0017_kept_balances.sql; docs/ledger.md, "Settled balances"): what each account's
// ledger transactions settled before a cutoff add up to, per currency, so that a balance read sums only what settled
// since (the recent and the pending) rather than every posting since the first. The one writer of
// ledger_settled_balances; the worker rolls every account forward on a schedule (ROLL_TASK), and repository.ts reads
// the sums.
//
// The hard part is the cutoff. A posting's created_at is its transaction's start, so a transaction open now may yet
// commit postings from before now: a roll to a cutoff before which such a posting could still appear would leave it
// out of the sum for good. So the cutoff is a little before now and no later than the start of any transaction open
// now, and a transaction whose start cannot be read is waited for (settledCutoff): after that, whatever settled
// before the cutoff is there to be summed.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Logger } from 'pino'
import type { Sql } from '../db/connect.js'
import { balanceRolls } from '../observability/metrics.js'

export const ROLL_TASK = 'ledger_roll_balances'

export interface RollSettings {
  /** How far before now the cutoff is: room for a transaction that has taken its start time but not yet its lock. */
  marginSeconds: number
  /** How long to wait for open transactions whose start cannot be read; after that, the roll waits for its next run. */
  waitMs: number
  /** Accounts read at a time. */
  batchSize: number
  /** How long one run rolls accounts (a job is stuck past src/worker/watchdog.ts's bound); the next run goes on. */
  maxMs: number
  signal?: AbortSignal | undefined
  /**
   * A cutoff held back further than this by an open transaction (its start read: the cutoff is no later) is logged at
   * warn with the transaction's backend: reads sum all that settled since, and grow slower while it stays open.
   */
  warnBehindSeconds: number
  /** Told once when the roll waits for open transactions (their backends' pids): a test's cue. */
  onWait?: ((pids: number[]) => void) | undefined
}

export type Cutoff = { through: Date; oldest?: { pid: number; behindSeconds: number } } | { heldBy: number[] }

/**
 * A cutoff before which every ledger transaction that will ever be committed is committed. It is `marginSeconds`
 * before now, or the start of the oldest transaction of this database open now if earlier (its postings are from
 * its start on). A transaction whose start this role may not read (another role's, unless this one is granted
 * pg_read_all_stats: autovacuum's, an administrator's) is waited for instead, up to `waitMs`: open transactions are
 * found in pg_locks (each holds a lock on its own virtual transaction id), which every role may read. The backends
 * still open then, if any.
 */
export async function settledCutoff(sql: Sql, settings: RollSettings): Promise<Cutoff> {
  const [taken] = await sql<{ through: Date; behind: number; oldest: number | null; open: string[]; pids: number[] }[]>`
    with open as (
      select l.virtualxid, l.pid, a.xact_start from pg_locks l join pg_stat_activity a on a.pid = l.pid
      where l.locktype = 'virtualxid' and l.granted and a.datname = current_database() and l.pid <> pg_backend_pid()),
    latest as (select now() - make_interval(secs => ${settings.marginSeconds}) as at),
    cutoff as (select at, least(at, (select min(xact_start) from open)) as through from latest)
    select through, extract(epoch from at - through)::float8 as behind,
           (select pid from open where xact_start = through limit 1) as oldest,
           (select coalesce(array_agg(virtualxid), '{}') from open where xact_start is null) as open,
           (select coalesce(array_agg(pid), '{}') from open where xact_start is null) as pids
    from cutoff`
  if (!taken) throw new Error('settledCutoff: no row')
  let open = taken.open
  let pids = taken.pids
  if (open.length > 0) settings.onWait?.(pids)
  const deadline = Date.now() + settings.waitMs
  for (let pause = 5; open.length > 0; pause = Math.min(pause * 2, 200)) {
    if (Date.now() >= deadline || settings.signal?.aborted) return { heldBy: pids }
    await sleep(pause)
    const [still] = await sql<{ open: string[]; pids: number[] }[]>`
      select coalesce(array_agg(virtualxid), '{}') as open, coalesce(array_agg(pid), '{}') as pids from pg_locks
      where locktype = 'virtualxid' and granted and virtualxid = any(${open}::text[])`
    open = still?.open ?? []
    pids = still?.pids ?? []
  }
  const oldest = taken.oldest === null ? undefined : { pid: taken.oldest, behindSeconds: taken.behind }
  return { through: taken.through, oldest }
}

/**
 * Rolls the account's kept sums forward to `through`: adds what settled from its last `through` up to this one, under
 * a lock of the account's roll so that two at once do not both add it. Nothing settled since: nothing is written (the
 * old `through` stays as right as it was). False if nothing was added.
 */
export async function rollAccount(sql: Sql, accountId: string, through: Date): Promise<boolean> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtextextended(${`ledger settled ${accountId}`}, 0))`
    const [kept] = await tx<{ through: Date | null }[]>`
      select max(through) as through from ledger_settled_balances where account_id = ${accountId}`
    const from = kept?.through ?? null
    if (from && from >= through) return false
    // This statement's snapshot is taken after settledCutoff's wait: every posting settled before `through` is in it.
    const moved = await tx<{ currency: string; net_cents: string }[]>`
      select currency, sum(net_cents) as net_cents from ledger_transactions
      where account_id = ${accountId}
        and ledger_settles_at(net_cents, created_at, available_on) >= coalesce(${from}::timestamptz, '-infinity')
        and ledger_settles_at(net_cents, created_at, available_on) < ${through}
      group by currency`
    if (moved.length === 0) return false
    await tx`
      update ledger_settled_balances set through = ${through}
      where account_id = ${accountId} and currency <> all(${moved.map((row) => row.currency)}::text[])`
    await tx`
      insert into ledger_settled_balances as kept (account_id, currency, through, net_cents)
      select ${accountId}, currency, ${through}, net_cents
      from unnest(${moved.map((row) => row.currency)}::text[], ${moved.map((row) => row.net_cents)}::bigint[])
        as moved (currency, net_cents)
      on conflict (account_id, currency) do update
        set through = excluded.through, net_cents = kept.net_cents + excluded.net_cents`
    return true
  })
}

/**
 * Rolls every account forward to one cutoff (settledCutoff), a page of accounts at a time. Held back (a transaction
 * whose start this role may not read did not end in time): nothing is rolled, and the backends holding it back are
 * returned.
 */
export async function rollBalances(
  sql: Sql,
  settings: RollSettings,
  log: Logger,
): Promise<{ rolled: number; heldBy?: number[] }> {
  const cutoff = await settledCutoff(sql, settings)
  if ('heldBy' in cutoff) {
    balanceRolls.inc({ result: 'held_back' })
    log.warn(
      { heldBy: cutoff.heldBy, waitMs: settings.waitMs },
      'balances not rolled: transactions whose start this role may not read did not end (their backends: heldBy)',
    )
    return { rolled: 0, heldBy: cutoff.heldBy }
  }
  if (cutoff.oldest && cutoff.oldest.behindSeconds > settings.warnBehindSeconds)
    log.warn(
      { pid: cutoff.oldest.pid, behindSeconds: Math.round(cutoff.oldest.behindSeconds), through: cutoff.through },
      'balances rolled only up to the start of a transaction open since (backend pid): reads grow slower meanwhile',
    )
  let rolled = 0
  let after = ''
  const deadline = Date.now() + settings.maxMs
  while (!settings.signal?.aborted) {
    if (Date.now() >= deadline) {
      log.warn(
        { rolled, after },
        'balances rolled in part, out of time: the next run starts over (those rolled have little left to add)',
      )
      break
    }
    const accounts = await sql<{ id: string }[]>`
      select id from accounts where id > ${after} order by id limit ${settings.batchSize}`
    for (const { id } of accounts) if (await rollAccount(sql, id, cutoff.through)) rolled++
    const last = accounts.at(-1)
    if (!last || accounts.length < settings.batchSize) break
    after = last.id
  }
  balanceRolls.inc({ result: 'rolled' })
  return { rolled }
}
