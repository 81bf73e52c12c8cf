// The one postgres.js pool of a process, with every wait bounded: opening a connection, each statement,
// and a transaction left idle. A request's own deadline (src/plugins/deadline.ts) bounds the rest.
import postgres from 'postgres'

export type Sql = postgres.Sql
export type Transaction = postgres.TransactionSql

export interface PoolOptions {
  max?: number
  connectTimeoutMs?: number
  /** PostgreSQL's statement_timeout; 0 turns it off (migrations, admin work), and the answer bound below with it. */
  statementTimeoutMs?: number
  /**
   * Through a pooler in transaction mode, a connection's server changes between transactions: statements are not
   * prepared (PgBouncer before 1.21 cannot), and session settings are not sent at connect (PgBouncer refuses
   * startup parameters it does not know); the timeouts then come from the role (docs/high-availability.md).
   */
  transactionPooling?: boolean
}

/**
 * How much longer than the statement timeout a query may go unanswered before it is given up. The server ends every
 * statement by then; silence past it means the answer was lost on the way (a pooler that dropped its server
 * mid-statement keeps the client waiting for ever).
 */
const ANSWER_MARGIN_MS = 5000

export function connect(url: string, options: PoolOptions = {}): Sql {
  const statementTimeoutMs = options.statementTimeoutMs ?? 3000
  return postgres(url, {
    max: options.max ?? 10,
    connect_timeout: (options.connectTimeoutMs ?? 2000) / 1000,
    // A query still unanswered past the statement timeout (plus a margin) was lost on the way: it is cancelled, and
    // it fails with QUERY_TIMEOUT; a cancel left unanswered for cancel_timeout (5 s) closes the connection, and the
    // pool connects again (patched: so does one whose cancel was answered, docs/operations.md).
    query_timeout: statementTimeoutMs ? (statementTimeoutMs + ANSWER_MARGIN_MS) / 1000 : 0,
    // And no wait for a connection (a query, a transaction, a reserved connection) outlasts that either: a pool whose
    // connections are all held fails what waits (QUEUE_TIMEOUT, a 503) rather than holding a worker's job for ever.
    queue_timeout: statementTimeoutMs ? (statementTimeoutMs + ANSWER_MARGIN_MS) / 1000 : 0,
    // Reconnect attempts while the database is down: postgres.js's default grows to 20 s between tries, which
    // kept the service failing long after PostgreSQL was back. Half a second at most comes back at once.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 0.5),
    // The server's NOTICEs (e.g. "relation already exists, skipping") are not the app's business.
    onnotice: () => {},
    prepare: !options.transactionPooling,
    // Through a pooler in transaction mode, one statement at a time per connection. A statement whose parameter
    // types the server must supply (prepare: false) is sent as Parse, Describe, Flush, and bound once described;
    // pipelined behind another statement, PgBouncer (1.18, Debian 12's) hands the server to another client at the
    // earlier statement's ReadyForQuery, with the Parse already on it, and the Bind goes to another server
    // (pgbouncer/pgbouncer#759): the connection stalls, or a value is bound to another client's statement.
    ...(options.transactionPooling ? { max_pipeline: 1 } : {}),
    connection: {
      application_name: 'payments-api',
      ...(options.transactionPooling
        ? {}
        : {
            statement_timeout: statementTimeoutMs,
            // A transaction left hanging must not hold row locks for long.
            idle_in_transaction_session_timeout: 60_000,
          }),
    },
  })
}
