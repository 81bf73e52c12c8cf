// The guides' commands run here as written, at the PORT (and HOOK_PORT) a reader chose, against the server as
// `npm start` runs it: docs/later-outcomes.md's bank debit, 3-D Secure payment and capture decided later with the
// simulated processor, docs/ledger.md's charge, refund, balance and payout, and docs/webhooks.md's endpoint and
// receiver. Commands that need a Stripe account (the Dashboard, `stripe listen`) are the only ones left out.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile, rm } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { startServer, type ServerProcess } from '../helpers/processes.js'
import { freePort } from '../helpers/system.js'

const ROOT = new URL('../../', import.meta.url).pathname
const blocksOf = async (page: string) =>
  [...(await readFile(`${ROOT}${page}`, 'utf8')).matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!)

let database: TestDatabase
let server: ServerProcess
let reader: Record<string, string>
beforeAll(async () => {
  database = await createTestDatabase()
  // The reader's exports: the ports they chose, and their database (here a test database).
  reader = { PORT: String(await freePort()), HOOK_PORT: String(await freePort()), DATABASE_URL: database.url }
  // A deployment's DATABASE_URL refuses local webhook URLs; the reader's embedded database allows them.
  server = await startServer({ ...reader, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' })
})
// Every shell's process group, killed at the end whatever became of its test (a receiver started with & outlives a
// test that timed out).
const groups: number[] = []
const killGroup = (pid: number) => {
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // the group is gone
  }
}
afterAll(async () => {
  for (const pid of groups) killGroup(pid)
  server?.child.kill('SIGKILL')
  await database?.drop()
})

/** Runs a script in bash, strict, as the reader's shell with their exports; its output once it ends, or at `until`. */
async function shell(script: string, until?: RegExp): Promise<{ code: number | null; output: string }> {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: ROOT,
    env: { ...process.env, ...reader },
    detached: true,
  })
  groups.push(child.pid!)
  let output = ''
  const seen = new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      output += chunk
      if (until?.test(output)) resolve()
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
  })
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  const code = until ? await Promise.race([seen.then(() => null), exited]) : await exited
  killGroup(child.pid!)
  return { code, output }
}

describe('docs/later-outcomes.md', () => {
  it('when its bank debit, 3-D Secure and decided-later commands run as written, then each says what its comment says', async () => {
    const block = (await blocksOf('docs/later-outcomes.md')).find((each) => each.includes('pm_usBankAccount_success'))!
    const { code, output } = await shell(block)
    expect(code, output).toBe(0)
    expect(output.trim().split('\n')).toEqual([
      'processing',
      'applied',
      'succeeded',
      'requires_action',
      'Complete authentication',
      '303 https://shop.example/orders/1042',
      'succeeded',
      '202',
      'capture_pending',
      'applied',
      'succeeded',
    ])
  }, 60_000)
})

describe('docs/ledger.md', () => {
  it('when its charge, refund, balance and payout commands run as written, then each says what its comment says', async () => {
    // The payout and report blocks continue in the reader's shell; the report's files land where the reader is.
    const [balance, payout, report] = await blocksOf('docs/ledger.md')
    const { code, output } = await shell(`${balance}\n${payout}\n${report}`).finally(() =>
      rm(`${ROOT}payouts.json`, { force: true }).then(() => rm(`${ROOT}payouts.csv`, { force: true })),
    )
    expect(code, output).toBe(0)
    expect(output.trim().split('\n')).toEqual([
      'succeeded',
      'charge 10000 320 9680 pending',
      '-2500',
      '-2500',
      '9680',
      'payout -7180,refund -2500,charge 9680',
      'applied',
      'paid 7180',
      'paid 0',
      'payout,status,currency,amount_cents',
    ])
  }, 60_000)
})

describe('docs/webhooks.md', () => {
  it('when its endpoint, receiver and charge run as written, then the event reaches the receiver, verified', async () => {
    const [endpoint, receiver] = (await blocksOf('docs/webhooks.md')).filter(
      (each) => each.includes('$API') || each.includes('webhook:receiver'),
    )
    const { output } = await shell(
      `${endpoint}\n${receiver}\nwait`,
      /verified and applied: evt_\w+ \(charge\.succeeded\)/,
    )
    expect(output).toContain('"object":"webhook_endpoint"')
    expect(output).toMatch(/verified and applied: evt_\w+ \(charge\.succeeded\)/)
  }, 60_000)
})
