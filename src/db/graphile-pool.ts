// The node-postgres pool graphile-worker runs on, made and ended by this project rather than by graphile-worker.
// A pool graphile-worker makes itself is ended without waiting, after its error handlers have been removed: when
// PostgreSQL stopped in that window (the embedded one, right after the worker at shutdown), an idle connection's
// "terminating connection due to administrator command" was an unhandled 'error' and the process exited 1.
// This pool keeps its handlers for its whole life, and its owner awaits pool.end() before the database stops.
import pg from 'pg'

/** `applicationName` names its connections in pg_stat_activity. */
export function graphilePool(
  connectionString: string,
  options: { applicationName: string; max?: number; onError?: (error: Error) => void },
): pg.Pool {
  const pool = new pg.Pool({ connectionString, max: options.max ?? 10, application_name: options.applicationName })
  const onError = options.onError ?? (() => {})
  // Given handlers of its own, graphile-worker installs none: an error on an idle or checked-out connection is
  // logged here; a query on a broken connection still fails by itself.
  pool.on('error', onError)
  pool.on('connect', (client) => client.on('error', onError))
  return pool
}

/** Runs `work` (graphile-worker's migrations, say) on a one-connection pool of its own, ended before it returns. */
export async function withGraphilePool<T>(connectionString: string, applicationName: string, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = graphilePool(connectionString, { applicationName, max: 1 })
  try {
    return await work(pool)
  } finally {
    await pool.end()
  }
}
