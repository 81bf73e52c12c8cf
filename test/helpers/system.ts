// Free ports, scratch directories and polling: what tests that start clusters and processes need.
import { chmod, mkdtemp } from 'node:fs/promises'
import { connect as connectSocket, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port')),
      )
    })
  })
}

/** A new directory under the system temp dir that the postgres user (when we run as root) can enter. */
export async function scratchDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  await chmod(dir, 0o755)
  return dir
}

/** Polls until `condition` holds; for states another process or request reaches on its own time. */
export async function until(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Whether something listens on the port, on loopback. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connectSocket(port, '127.0.0.1')
    socket
      .once('connect', () => {
        socket.end()
        resolve(true)
      })
      .once('error', () => resolve(false))
  })
}
