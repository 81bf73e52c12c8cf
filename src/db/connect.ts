// The one postgres.js pool of a process, with every wait bounded: opening a connection, each statement,
// and a transaction left idle. A request's own deadline (src/plugins/deadline.ts) bounds the rest.
import postgres from 'postgres'

export type Sql = postgres.Sql
export type Transaction = postgres.TransactionSql

export interface PoolOptions {
  max?: number
  connectTimeoutMs?: number
  /** PostgreSQL's statement_timeout; 0 turns it off (migrations, admin work). */
  statementTimeoutMs?: number
  /**
   * Through a pooler in transaction mode, a connection's server changes between transactions: statements are not
   * prepared (PgBouncer before 1.21 cannot), and session settings are not sent at connect (PgBouncer refuses
   * startup parameters it does not know); the timeouts then come from the role (docs/high-availability.md).
   */
  transactionPooling?: boolean
}

export function connect(url: string, options: PoolOptions = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    connect_timeout: (options.connectTimeoutMs ?? 2000) / 1000,
    // Reconnect attempts while the database is down: postgres.js's default grows to 20 s between tries, which
    // kept the service failing long after PostgreSQL was back. Half a second at most comes back at once.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 0.5),
    // The server's NOTICEs (e.g. "relation already exists, skipping") are not the app's business.
    onnotice: () => {},
    prepare: !options.transactionPooling,
    connection: {
      application_name: 'payments-api',
      ...(options.transactionPooling
        ? {}
        : {
            statement_timeout: options.statementTimeoutMs ?? 3000,
            // A transaction left hanging must not hold row locks for long.
            idle_in_transaction_session_timeout: 60_000,
          }),
    },
  })
}
