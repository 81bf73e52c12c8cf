// The one postgres.js pool of a process.
import postgres from 'postgres'

export type Sql = postgres.Sql
export type Transaction = postgres.TransactionSql

export function connect(url: string, options: { max?: number } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    // The server's NOTICEs (e.g. "relation already exists, skipping") are not the app's business.
    onnotice: () => {},
    connection: {
      application_name: 'payments-api',
      // A transaction left hanging (a stuck processor call inside a refund) must not hold row locks forever.
      idle_in_transaction_session_timeout: 60_000,
    },
  })
}
