// Where an example app (the webhook receiver, the invoice collector) keeps its own records: the database its
// own variable names, as a merchant's app would have; else a database of its own beside the service's, on the
// same server (DATABASE_URL's, or the embedded one), named after the service's: payments_invoice_collector.
// Never the service's own database: graphile-worker announces a schema migration to every worker listening on
// the database, whatever its schema, and the service's worker shuts down on a breaking one.
import { loadConfig } from '../src/config.js'
import { connect, type PoolOptions, type Sql } from '../src/db/connect.js'
import { openDatabase } from '../src/db/database.js'
import { createDatabaseIfMissing } from '../src/db/embedded.js'
import { parseHosts, withDatabase } from '../src/db/hosts.js'

export async function exampleDatabase(
  urlVariable: string,
  name: string,
  pool: PoolOptions = {},
): Promise<{ url: string; sql: Sql; close(): Promise<void> }> {
  const given = process.env[urlVariable]
  // The service's database only to find its server (and keep the embedded one running while we use it).
  const service = given ? undefined : await openDatabase(loadConfig(), {}, { migrate: false })
  let url = given ?? ''
  if (service) {
    const own = new URL(parseHosts(service.url).firstHostUrl)
    const database = `${decodeURIComponent(own.pathname.slice(1))}_${name}`
    await createDatabaseIfMissing(service.url, database)
    url = withDatabase(service.url, database)
  }
  const sql = connect(url, pool)
  return {
    url,
    sql,
    close: async () => {
      await sql.end({ timeout: 5 })
      await service?.close()
    },
  }
}
