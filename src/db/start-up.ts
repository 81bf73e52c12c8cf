// Start-up steps that need the database are tried again while it is unavailable (a failover under way, a
// restart, a node that is read-only for now) instead of ending the process at once: a supervisor's crash-loop
// back-off would otherwise keep the process down for minutes after the database came back. Any other failure
// (a wrong password, a migration that does not apply) ends the start-up at once, as before.
import { setTimeout as sleep } from 'node:timers/promises'
import { isDatabaseUnavailable } from './errors.js'

export interface StartUpRetry {
  /** How long the attempts may go on, from the first. 0: one attempt. */
  waitMs: number
  /** Told before each wait, with the failure and the wait. */
  onWait(error: unknown, delayMs: number): void
}

/**
 * `attempt`'s result, trying again (waits of 0.25 s doubling to 5 s) while the database is unavailable, up to `waitMs`.
 */
export async function whileDatabaseUnavailable<T>(attempt: () => Promise<T>, retry: StartUpRetry): Promise<T> {
  const deadline = Date.now() + retry.waitMs
  for (let delayMs = 250; ; delayMs = Math.min(delayMs * 2, 5000)) {
    try {
      return await attempt()
    } catch (error) {
      if (!unavailable(error) || Date.now() + delayMs > deadline) throw error
      retry.onWait(error, delayMs)
      await sleep(delayMs)
    }
  }
}

/**
 * node-postgres (graphile-worker's driver) reports a connection lost while opening, or never opened, with a
 * message and no code.
 */
const NODE_POSTGRES_CONNECTION_LOST = /^(Connection terminated|timeout expired)/

function unavailable(error: unknown): boolean {
  return (
    isDatabaseUnavailable(error) ||
    (error instanceof Error && !('code' in error) && NODE_POSTGRES_CONNECTION_LOST.test(error.message))
  )
}
