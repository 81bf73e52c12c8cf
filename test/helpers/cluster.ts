// A PostgreSQL cluster of a test's own, which the test may stop, restart, freeze and thaw while the app uses it.
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { createDatabaseIfMissing } from '../../src/db/embedded.js'
import { LocalCluster } from '../../src/db/local-cluster.js'
import { migrate } from '../../src/db/migrate.js'
import { freePort, scratchDir } from './system.js'

export interface PrivateCluster {
  /** A migrated database on the cluster. */
  url: string
  stop(): Promise<void>
  start(): Promise<void>
  /** SIGSTOP to the server and every backend: connections stay open and nothing answers. */
  freeze(): Promise<void>
  thaw(): Promise<void>
  destroy(): Promise<void>
}

export async function startPrivateCluster(): Promise<PrivateCluster> {
  const dir = await scratchDir('payments-cluster-')
  const port = await freePort()
  const cluster = new LocalCluster({
    directory: join(dir, 'pg'),
    port,
    user: 'postgres',
    password: 'postgres',
    settings: { fsync: 'off' },
  })
  await cluster.initialise()
  await cluster.start()
  await createDatabaseIfMissing(`postgres://postgres:postgres@127.0.0.1:${port}/postgres`, 'payments')
  const url = `postgres://postgres:postgres@127.0.0.1:${port}/payments`
  await migrate(url)
  let frozen = false
  return {
    url,
    stop: () => cluster.stop(),
    start: () => cluster.start(),
    freeze: async () => {
      frozen = true
      await cluster.signalAll('SIGSTOP')
    },
    thaw: async () => {
      frozen = false
      await cluster.signalAll('SIGCONT')
    },
    destroy: async () => {
      if (frozen) await cluster.signalAll('SIGCONT')
      await cluster.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}
