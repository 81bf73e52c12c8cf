// A pg_auto_failover formation of a test's own: a monitor and two PostgreSQL nodes with synchronous replication,
// each node run by its pg_autoctl keeper, on this machine, and on demand a PgBouncer in front of each node.
// Debian's postgresql-15-auto-failover and pgbouncer provide them (.ci/run installs them). PostgreSQL refuses to
// run as root, so as root every pg_autoctl and pgbouncer runs as `postgres`.
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { connect, type Sql } from '../../src/db/connect.js'
import { PGBOUNCER, pgBouncerIni } from './pgbouncer.js'
import { canConnect, freePort, scratchDir, until } from './system.js'

const run = promisify(execFile)
const PG_AUTOCTL = '/usr/bin/pg_autoctl'

/**
 * The monitor's health checks (milliseconds) and its wait for a lost primary to confirm its demotion, and each
 * keeper's network_partition_timeout (seconds, must stay below primary_demote_timeout): defaults 5000, 5000,
 * 2000, 2, 20000, 30000 and 20.
 */
export const SHORTER_FAILOVER = {
  monitor: {
    health_check_period: 2000,
    health_check_timeout: 2000,
    health_check_retry_delay: 1000,
    health_check_max_retries: 1,
    node_considered_unhealthy_timeout: 5000,
    primary_demote_timeout: 15000,
  },
  networkPartitionTimeoutSeconds: 10,
}

export interface FormationNode {
  name: string
  port: number
  pgdata: string
}

export interface Formation {
  /** `pg_autoctl show uri --formation default`: every node, target_session_attrs=read-write. */
  uri: string
  nodes: FormationNode[]
  /** The node that serves writes now, by the monitor's account (none in the middle of a failover). */
  primary(): Promise<FormationNode | undefined>
  /** Waits until the monitor reports one primary and one secondary; resolves with the primary. */
  settled(timeoutMs?: number): Promise<FormationNode>
  /**
   * A planned switchover: the monitor's perform_failover, called while no keeper's node_active call is in flight
   * (SWITCHOVER_SQL); returns once the roles have switched.
   */
  switchover(): Promise<void>
  /** The primary's keeper, its PostgreSQL and every backend, SIGKILL at once: nothing restarts it in place. */
  killPrimary(): Promise<FormationNode>
  /** Starts a killed node's keeper again: it rejoins as a standby (pg_rewind), and settled() waits for it. */
  restart(node: FormationNode): void
  /**
   * Failure detection and the wait for the old primary's demotion shortened from pg_auto_failover's defaults
   * (SHORTER_FAILOVER), with the safety margin kept: a keeper cut off demotes itself before the monitor promotes.
   */
  shortenFailover(): Promise<void>
  /** Starts a PgBouncer in transaction mode in front of each node; resolves with the URL that lists them. */
  startPgBouncers(): Promise<string>
  /** The monitor's and the nodes' pg_autoctl output, for a failing test's message. */
  logs(): string
  destroy(): Promise<void>
}

function pgBinDir(): string | undefined {
  return ['15', '16', '17', '14']
    .map((version) => `/usr/lib/postgresql/${version}/bin`)
    .find((dir) => existsSync(join(dir, 'pg_ctl')))
}

export async function startFormation(database = 'payments'): Promise<Formation> {
  const bin = pgBinDir()
  if (!existsSync(PG_AUTOCTL) || !bin)
    throw new Error(
      'pg_auto_failover is not installed here: apt-get install postgresql-15-auto-failover (.ci/run does)',
    )
  const dir = await scratchDir('payments-failover-')
  const asRoot = process.getuid?.() === 0
  const xdg = {
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_RUNTIME_DIR: join(dir, 'run'),
  }
  // pg_autoctl keeps its files under <XDG dir>/pg_autoctl/<pgdata>; two commands creating the same missing
  // directory at once fail with "File exists", so the shared ones are made here, and the monitor's state is
  // only asked for once the monitor listens.
  for (const xdgDir of Object.values(xdg))
    await mkdir(join(xdgDir, 'pg_autoctl', dir), { recursive: true, mode: 0o700 })
  if (asRoot) await run('chown', ['-R', 'postgres', dir])
  const env = { ...process.env, PATH: `${bin}:/usr/bin:/bin:/usr/sbin:/sbin`, ...xdg }
  const pgautoctl = async (...args: string[]) =>
    (
      await run(
        ...((asRoot ? ['runuser', ['-u', 'postgres', '--', PG_AUTOCTL, ...args]] : [PG_AUTOCTL, args]) as [
          string,
          string[],
        ]),
        { env, cwd: dir },
      )
    ).stdout
  const outputs: string[] = []
  const services = new Map<string, ChildProcess>()
  // Each keeper in a process group of its own, with its PostgreSQL and backends: one kill takes the node down.
  const service = (name: string, args: string[], program = PG_AUTOCTL) => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', program, ...args]] : [program, args]
    const child = spawn(file, argv, { env, cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    const index = outputs.push('') - 1
    const record = (chunk: Buffer) => (outputs[index] += chunk.toString().replace(/^/gm, `[${name}] `))
    child.stdout!.on('data', record)
    child.stderr!.on('data', record)
    services.set(name, child)
    return child
  }
  const common = ['--hostname', '127.0.0.1', '--auth', 'trust', '--ssl-self-signed', '--pgctl', join(bin, 'pg_ctl')]

  const monitorPort = await freePort()
  const monitorData = join(dir, 'monitor')
  service('monitor', [
    'create',
    'monitor',
    '--pgdata',
    monitorData,
    '--pgport',
    String(monitorPort),
    ...common,
    '--run',
  ])
  const monitorUri = `postgres://autoctl_node@127.0.0.1:${monitorPort}/pg_auto_failover?sslmode=require`
  const state = async () =>
    JSON.parse(await pgautoctl('show', 'state', '--pgdata', monitorData, '--json')) as NodeState[]
  const nodes: FormationNode[] = []
  const createNodes = async () => {
    await until(() => canConnect(monitorPort), 60_000)
    await until(
      async () =>
        state().then(
          () => true,
          () => false,
        ),
      60_000,
    )
    for (const name of ['node1', 'node2']) {
      const node = { name, port: await freePort(), pgdata: join(dir, name) }
      nodes.push(node)
      service(name, [
        'create',
        'postgres',
        '--pgdata',
        node.pgdata,
        '--pgport',
        String(node.port),
        ...common,
        '--monitor',
        monitorUri,
        '--dbname',
        database,
        '--name',
        name,
        '--run',
      ])
      if (name === 'node1')
        await until(
          async () => (await state()).some((row) => row.nodename === name && row.current_group_state === 'single'),
          60_000,
        )
    }
  }
  const byName = (name: string) => nodes.find((node) => node.name === name)!
  const WRITABLE = ['single', 'wait_primary', 'primary']

  const formation: Formation = {
    uri: '',
    nodes,
    primary: async () => {
      const row = (await state()).find(
        (node) => WRITABLE.includes(node.current_group_state) && WRITABLE.includes(node.assigned_group_state),
      )
      return row && byName(row.nodename)
    },
    settled: async (timeoutMs = 60_000) => {
      await until(async () => {
        const rows = await state()
        const ready =
          rows.length === 2 &&
          rows.some((row) => row.current_group_state === 'primary' && row.assigned_group_state === 'primary') &&
          rows.some((row) => row.current_group_state === 'secondary' && row.assigned_group_state === 'secondary')
        // A new standby's base backup waits for a checkpoint, spread over minutes by default: ask for it now.
        if (!ready) await checkpoint(rows)
        return ready
      }, timeoutMs)
      return (await formation.primary())!
    },
    switchover: async () => {
      const before = await formation.settled()
      await onMonitor((monitor) => monitor.unsafe(SWITCHOVER_SQL).simple())
      const after = await formation.settled(60_000)
      if (after.name === before.name) throw new Error(`the switchover left ${before.name} the primary`)
    },
    killPrimary: async () => {
      const primary = await formation.settled()
      process.kill(-services.get(primary.name)!.pid!, 'SIGKILL')
      return primary
    },
    restart: (node) => {
      service(node.name, ['run', '--pgdata', node.pgdata])
    },
    shortenFailover: async () => {
      await onMonitor(async (monitor) => {
        for (const [name, value] of Object.entries(SHORTER_FAILOVER.monitor))
          await monitor.unsafe(`alter system set pgautofailover.${name} = ${value}`)
        await monitor`select pg_reload_conf()`
      })
      for (const node of nodes) {
        await pgautoctl(
          'config',
          'set',
          '--pgdata',
          node.pgdata,
          'timeout.network_partition_timeout',
          String(SHORTER_FAILOVER.networkPartitionTimeoutSeconds),
        )
        await pgautoctl('reload', '--pgdata', node.pgdata).catch(() => '')
      }
    },
    startPgBouncers: async () => {
      const ports: number[] = []
      // Written once, before either starts: written again for the second, it was empty (truncated) for a moment
      // while the first read it, which then refused every user ("trust" authentication failed) for good.
      const users = join(dir, 'userlist.txt')
      await writeFile(users, '"postgres" ""\n"payments" ""\n')
      if (asRoot) await run('chown', ['postgres', users])
      for (const node of nodes) {
        const port = await freePort()
        ports.push(port)
        const ini = join(dir, `pgbouncer-${node.name}.ini`)
        await writeFile(
          ini,
          pgBouncerIni({
            server: `127.0.0.1:${node.port}`,
            port,
            authFile: users,
            poolSize: 40,
            // Its console (SHOW POOLS, SHOW SERVERS), for a run that needs to say where connections wait.
            extra: ['max_client_conn = 500', 'server_tls_sslmode = require', 'admin_users = postgres'],
          }),
        )
        if (asRoot) await run('chown', ['postgres', ini])
        service(`pgbouncer-${node.name}`, [ini], PGBOUNCER)
      }
      await until(async () => (await Promise.all(ports.map((port) => canConnect(port)))).every(Boolean), 30_000)
      const hosts = ports.map((port) => `127.0.0.1:${port}`).join(',')
      return `postgres://${hosts}/${database}?target_session_attrs=read-write&sslmode=disable`
    },
    logs: () => outputs.join('\n'),
    destroy: async () => {
      for (const child of [...services.values()].reverse()) {
        try {
          process.kill(-child.pid!, 'SIGKILL')
        } catch {
          // already gone
        }
      }
      // Backends orphaned by a killed postmaster leave on their own; give their files back first.
      await until(async () => (await postmastersOf(dir)).length === 0, 10_000).catch(() => {})
      await rm(dir, { recursive: true, force: true })
    },
  }
  const onMonitor = async (work: (monitor: Sql) => Promise<unknown>) => {
    const monitor = connect(`postgres://postgres@127.0.0.1:${monitorPort}/pg_auto_failover?sslmode=require`, {
      max: 1,
    })
    try {
      await work(monitor)
    } finally {
      await monitor.end({ timeout: 1 })
    }
  }
  const checkpoint = async (rows: NodeState[]) => {
    const primary = rows.find(
      (row) =>
        row.assigned_group_state === 'primary' ||
        row.assigned_group_state === 'wait_primary' ||
        row.current_group_state === 'single',
    )
    if (!primary) return
    const sql = connect(`postgres://postgres@127.0.0.1:${primary.nodeport}/postgres?sslmode=require`, {
      max: 1,
      connectTimeoutMs: 1000,
    })
    await sql`checkpoint`.catch(() => {})
    await sql.end({ timeout: 1 })
  }
  try {
    await createNodes()
    await formation.settled(120_000)
    formation.uri = (await pgautoctl('show', 'uri', '--pgdata', monitorData, '--formation', 'default')).trim()
  } catch (error) {
    const logs = formation.logs()
    await formation.destroy()
    throw new Error(`the formation did not start: ${(error as Error).message}\n${logs.slice(-6000)}`)
  }
  return formation
}

/**
 * `pg_autoctl perform failover` without pg_auto_failover 2.0's race (upstream #774, fixed by #1165 after 2.2),
 * run on the monitor as docs/high-availability.md tells an operator to (test/docs/high-availability.test.ts holds
 * the two equal). A keeper's node_active reads its own node's row, then waits for the group's lock; if
 * perform_failover takes that lock in between, the primary's call goes on with its row from before (goal still
 * `primary`) and the candidate's from after (`prepare_promotion`), finds no healthy standby, and replaces `draining`
 * with `wait_primary`: the old primary acknowledges commits with no synchronous standby while the candidate stops
 * replicating and is promoted. Holding the node table exclusively first waits out every node_active that has read a
 * row (each keeps its read lock to its end) and keeps new ones from reading until both goals are committed.
 */
export const SWITCHOVER_SQL = `begin;
set local lock_timeout = '20s';
lock table pgautofailover.node in access exclusive mode;
select pgautofailover.perform_failover('default', 0);
commit;`

interface NodeState {
  nodename: string
  nodeport: number
  current_group_state: string
  assigned_group_state: string
}

/** Pids of PostgreSQL servers still running from a data directory under `dir`. */
async function postmastersOf(dir: string): Promise<number[]> {
  const pids: number[] = []
  for (const pid of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(pid)) continue
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')
    if (cmdline.includes(dir) && cmdline.includes('postgres')) pids.push(Number(pid))
  }
  return pids
}
