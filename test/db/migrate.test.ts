// Migrations: ten processes starting together migrate once, and every version is recorded.
import { readdir } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { connect } from '../../src/db/connect.js'
import { migrate } from '../../src/db/migrate.js'
import { withDatabase } from '../helpers/database.js'
import { inject } from 'vitest'
import { randomBytes } from 'node:crypto'

describe('migrate', () => {
  it('when ten instances migrate an empty database at once, then each migration is applied exactly once', async () => {
    const serverUrl = inject('testServerUrl')
    const name = `payments_migrate_${randomBytes(6).toString('hex')}`
    const admin = connect(serverUrl, { max: 1, statementTimeoutMs: 0 })
    await admin`create database ${admin(name)}`
    const url = withDatabase(serverUrl, name)
    const reader = connect(url, { max: 1 })
    try {
      const results = await Promise.all(Array.from({ length: 10 }, () => migrate(url)))
      const files = (await readdir(new URL('../../db/migrations/', import.meta.url)))
        .filter((file) => file.endsWith('.sql'))
        .sort()
      // One instance applied them all; the other nine found nothing left to do.
      expect(results.filter((applied) => applied.length > 0)).toEqual([files])
      const recorded = await reader<{ name: string }[]>`select name from schema_migrations order by name`
      expect(recorded.map((row) => row.name)).toEqual(files)
    } finally {
      await reader.end()
      await admin`drop database if exists ${admin(name)} with (force)`
      await admin.end()
    }
  })
})
