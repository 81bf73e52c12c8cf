// A fresh, migrated database for one test file, cloned from the template that the global setup prepared.
import { randomBytes } from 'node:crypto'
import { inject } from 'vitest'
import { connect, type Sql } from '../../src/db/connect.js'

export interface TestDatabase {
  url: string
  sql: Sql
  drop(): Promise<void>
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = inject('testServerUrl')
  const name = `payments_test_${randomBytes(6).toString('hex')}`
  const admin = connect(serverUrl, { max: 1, statementTimeoutMs: 0 })
  await admin`create database ${admin(name)} template ${admin(inject('testTemplateDatabase'))}`
  const url = withDatabase(serverUrl, name)
  const sql = connect(url)
  return {
    url,
    sql,
    drop: async () => {
      await sql.end({ timeout: 5 })
      await admin`drop database if exists ${admin(name)} with (force)`
      await admin.end()
    },
  }
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}
