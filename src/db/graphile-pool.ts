// The node-postgres pool graphile-worker runs on, made and ended by this project rather than by graphile-worker.
// A pool graphile-worker makes itself is ended without waiting, after its error handlers have been removed: when
// PostgreSQL stopped in that window (the embedded one, right after the worker at shutdown), an idle connection's
// "terminating connection due to administrator command" was an unhandled 'error' and the process exited 1.
// This pool keeps its handlers for its whole life, and its owner awaits pool.end() before the database stops.
//
// node-postgres connects to one host. Given a URL that names several (pg_auto_failover's), each new connection
// goes to the node that is writable now, as postgres.js does with target_session_attrs=read-write: a worker must
// follow a promoted standby, and never keep writing to a demoted primary.
import pg from 'pg'
import { parseHosts, urlParameter, type HostPort } from './hosts.js'

/** `applicationName` names its connections in pg_stat_activity. */
export function graphilePool(
  connectionString: string,
  options: { applicationName: string; max?: number; onError?: (error: Error) => void },
): pg.Pool {
  const { hosts, firstHostUrl } = parseHosts(connectionString)
  const pool = new pg.Pool({
    connectionString: withLibpqSslModes(firstHostUrl),
    max: options.max ?? 10,
    application_name: options.applicationName,
    ...(hosts.length > 1 ? { Client: writableNodeClient(hosts) } : {}),
  })
  const onError = options.onError ?? (() => {})
  // Given handlers of its own, graphile-worker installs none: an error on an idle or checked-out connection is
  // logged here; a query on a broken connection still fails by itself.
  pool.on('error', onError)
  pool.on('connect', (client) => client.on('error', onError))
  return pool
}

/** Runs `work` (graphile-worker's migrations, say) on a one-connection pool of its own, ended before it returns. */
export async function withGraphilePool<T>(
  connectionString: string,
  applicationName: string,
  work: (pool: pg.Pool) => Promise<T>,
): Promise<T> {
  const pool = graphilePool(connectionString, { applicationName, max: 1 })
  try {
    return await work(pool)
  } finally {
    await pool.end()
  }
}

// node-postgres reads sslmode=require as verify-full unless told to read it as libpq and postgres.js do
// (encrypted, certificate not checked); the service's two drivers must agree on what the one URL means.
function withLibpqSslModes(url: string): string {
  if (!urlParameter(url, 'sslmode') || urlParameter(url, 'uselibpqcompat')) return url
  return `${url}${url.includes('?') ? '&' : '?'}uselibpqcompat=true`
}

const PROBE_TIMEOUT_MS = 2000

/**
 * A pg.Client class whose connections go to whichever of `hosts` is writable. The first connection of a pool
 * looks for the writable node before it connects (probing every host), rather than trying the first host named:
 * after a failover that host is a standby, and a process starting then (a worker restarted after a crash, a
 * migration) makes one attempt and exits on its failure. Later connections go to the node found writable last;
 * when that node is gone or read-only, the attempt fails after the others have been probed, so that the pool's
 * next attempt goes to the new primary.
 */
function writableNodeClient(hosts: HostPort[]): typeof pg.Client {
  const [first] = hosts
  if (!first) throw new Error('a database URL names at least one host')
  let writable: HostPort | undefined
  const probe = async (config: pg.ClientConfig, node: HostPort): Promise<boolean> => {
    const client = Object.assign(new pg.Client({ ...config, connectionTimeoutMillis: PROBE_TIMEOUT_MS }), node)
    client.on('error', () => {})
    try {
      await client.connect()
      return await isWritable(client)
    } catch {
      return false
    } finally {
      void client.end().catch(() => {})
    }
  }
  /** The first of `candidates`, in the order given, that takes writes now; all are probed at once. */
  const findWritable = async (config: pg.ClientConfig, candidates: HostPort[]): Promise<HostPort | undefined> => {
    const found = await Promise.all(candidates.map((node) => probe(config, node)))
    return candidates[found.indexOf(true)]
  }
  return class WritableNodeClient extends pg.Client {
    readonly #config: pg.ClientConfig

    constructor(config: pg.ClientConfig) {
      super(config)
      this.#config = config
    }

    // pg-pool connects with a callback; graphile-worker's own code awaits the promise.
    override connect(): Promise<pg.Client>
    override connect(callback: (error: Error | null, client?: pg.Client) => void): void
    override connect(callback?: (error: Error | null, client?: pg.Client) => void): Promise<pg.Client> | undefined {
      const connected = this.#connectToWritable().then(() => this)
      if (!callback) return connected
      connected.then((client) => callback(null, client), callback)
      return undefined
    }

    // Through a pooler the node behind a live connection can change roles: a write refused as read-only (25006)
    // ends this connection (the pool drops it), and the next one looks for the primary.
    override query(...args: unknown[]): never {
      const leaveIfReadOnly = (error: unknown) => {
        if ((error as { code?: unknown } | null)?.code === '25006') void this.end().catch(() => {})
      }
      const callback = args.at(-1)
      if (typeof callback === 'function') {
        args[args.length - 1] = (error: unknown, result: unknown) => {
          if (error) leaveIfReadOnly(error)
          ;(callback as (error: unknown, result: unknown) => void)(error, result)
        }
      }
      const result = (super.query as (...args: unknown[]) => unknown)(...args)
      if (result instanceof Promise) result.catch(leaveIfReadOnly)
      return result as never
    }

    async #connectToWritable(): Promise<void> {
      // None found (every node read-only or down, mid-failover): the first host, whose refusal says why.
      writable ??= (await findWritable(this.#config, hosts)) ?? first
      const node = writable
      Object.assign(this, node)
      // Connected, a lost connection is an 'error' event, and pg-pool listens only once this resolves: one reset
      // during the check ended the worker process (found by the fault run). The check's own failure says it.
      const ignore = () => {}
      this.on('error', ignore)
      try {
        await super.connect()
        if (await isWritable(this)) return
        throw Object.assign(new Error(`${node.host}:${node.port} is read-only (a standby, or a demoted primary)`), {
          code: '25006',
        })
      } catch (error) {
        void this.end().catch(() => {})
        writable = await findWritable(
          this.#config,
          hosts.filter((candidate) => candidate !== node),
        )
        throw error
      } finally {
        this.off('error', ignore)
      }
    }
  }
}

/** Whether the node behind `db` (a connection, or one of the pool's) takes writes now. */
export async function isWritable(db: pg.Client | pg.Pool): Promise<boolean> {
  const { rows } = await db.query<{ transaction_read_only: string }>('show transaction_read_only')
  return rows[0]?.transaction_read_only === 'off'
}
