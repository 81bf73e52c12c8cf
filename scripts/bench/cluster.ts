// The benchmark's own PostgreSQL, durable as in production (fsync and synchronous_commit on), with
// pg_stat_statements, and databases in it migrated as the service migrates its own, each with an account.
import { rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAccount } from '../../src/accounts/api-keys.js'
import { connect, type Sql } from '../../src/db/connect.js'
import { createDatabaseIfMissing } from '../../src/db/embedded.js'
import { LocalCluster } from '../../src/db/local-cluster.js'
import { migrate } from '../../src/db/migrate.js'
import { freePort } from './processes.js'

export interface BenchDatabase {
  url: string
  /** The benchmark's own connection, to read counters and set things up. */
  sql: Sql
  apiKey: string
  /** What every server under test is started with, besides its port. */
  env: Record<string, string>
}

export interface BenchCluster {
  port: number
  postmasterPid: number
  /**
   * Creates and migrates a database, runs `setupSql` in it (one statement), and makes an account. With
   * `icuLocale` (en-US), text compares under that ICU collation instead of C, as in a cluster initialised with a
   * language's locale (the compose file's image: en_US.utf8).
   */
  database(name: string, setupSql?: string, options?: { icuLocale?: string }): Promise<BenchDatabase>
  stop(): Promise<void>
}

// The benchmark's own connections wait for a connection as long as CI may starve them: beside the fault run, at nice
// 19, one took more than the service's 2 s to connect (CONNECT_TIMEOUT), and the benchmarks failed for it.
export const PATIENT = { connectTimeoutMs: 120_000 }

export async function startBenchCluster(): Promise<BenchCluster> {
  const dir = join(tmpdir(), `payments-bench-${process.pid}`)
  const port = await freePort()
  const cluster = new LocalCluster({
    directory: join(dir, 'pg'),
    port,
    user: 'postgres',
    password: 'postgres',
    settings: { max_connections: '200', shared_preload_libraries: 'pg_stat_statements' },
  })
  await cluster.initialise()
  await cluster.start()
  const pools: Sql[] = []
  return {
    port,
    postmasterPid: cluster.pid!,
    async database(name, setupSql, options = {}) {
      const serverUrl = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`
      if (options.icuLocale) await createWithCollation(serverUrl, name, options.icuLocale)
      else await createDatabaseIfMissing(serverUrl, name)
      const url = `postgres://postgres:postgres@127.0.0.1:${port}/${name}`
      const sql = connect(url, { max: 4, statementTimeoutMs: 0, ...PATIENT })
      pools.push(sql)
      await migrate(url, PATIENT)
      await sql`create extension if not exists pg_stat_statements`
      await sql`create extension if not exists pg_walinspect`
      if (setupSql) await sql.unsafe(setupSql)
      const { api_key: apiKey } = await createAccount(sql, 'bench')
      return {
        url,
        sql,
        apiKey,
        env: { DATABASE_URL: url, LOG_LEVEL: 'warn', DATABASE_POOL_SIZE: '10', RATE_LIMIT_MAX: '1000000000' },
      }
    },
    async stop() {
      for (const sql of pools) await sql.end({ timeout: 1 })
      await cluster.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/** A database whose text compares under an ICU collation (PostgreSQL's embedded build carries ICU). */
async function createWithCollation(serverUrl: string, name: string, icuLocale: string): Promise<void> {
  const sql = connect(serverUrl, { max: 1, statementTimeoutMs: 0, ...PATIENT })
  try {
    await sql.unsafe(
      `create database "${name}" template template0 encoding 'UTF8' locale 'C' locale_provider icu icu_locale ` +
        `'${icuLocale.replaceAll("'", '')}'`,
    )
  } finally {
    await sql.end({ timeout: 1 })
  }
}
