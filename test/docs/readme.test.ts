// The README cannot go stale: its "Use it" commands run here exactly as they are written, in order, against `npm
// start` as a newcomer runs it (the embedded database, no other setting) on ports of their choosing (PORT,
// EMBEDDED_PG_PORT and HOOK_PORT in their environment, as a reader's exports); every npm script it names elsewhere
// exists (those run in CI, .ci/run, or in their own tests: test/scripts.test.ts).
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { connect } from 'node:net'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type ServerProcess } from '../helpers/processes.js'
import { freePort } from '../helpers/system.js'

const ROOT = new URL('../../', import.meta.url).pathname
const readme = await readFile(new URL('README.md', `file://${ROOT}`), 'utf8')
const shellBlocks = (text: string) => [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!)
const section = (title: string) =>
  readme.slice(readme.indexOf(`## ${title}\n`), readme.indexOf('\n## ', readme.indexOf(`## ${title}\n`) + 1))

// As a newcomer runs it: `npm start` on the embedded PostgreSQL (its own data directory, as a fresh clone's .data),
// on ports of their choosing, exported so that every command finds the same server and database.
let dataDir: string
let server: ServerProcess
let reader: Record<string, string>
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'readme-'))
  reader = { PORT: String(await freePort()), EMBEDDED_PG_PORT: String(await freePort()), DATA_DIR: dataDir }
  server = await startServer({ ...reader, DATABASE_URL: '' })
}, 120_000)
afterAll(async () => {
  server?.child.kill('SIGTERM')
  await server?.exited
  await rm(dataDir, { recursive: true, force: true })
})

/** Whether something accepts connections on the port. */
const listens = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })

describe('README.md', () => {
  it('when its "Use it" commands run in order, then each succeeds and shows what the README says', async () => {
    const receiverPort = String(await freePort())
    const script = shellBlocks(section('Use it')).join('\n')
    expect(script).toContain('/v1/webhook_endpoints')
    const env = { ...process.env, DATABASE_URL: '', ...reader, HOOK_PORT: receiverPort }
    const shell = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT, env, detached: true })
    let output = ''
    shell.stdout.on('data', (chunk) => (output += chunk))
    shell.stderr.on('data', (chunk) => (output += chunk))
    const [code] = await once(shell, 'exit')
    try {
      process.kill(-shell.pid!, 'SIGKILL') // the receiver, if the script failed before its kill
    } catch {
      // the group is gone
    }
    expect(code, output).toBe(0)
    expect(output).toMatch(/HTTP\/1\.1 201 Created/)
    expect(output).toMatch(/idempotent-replayed: true/i)
    expect(output).toContain('https://payments.example.com/problems/idempotency-key-reused')
    expect(output).toMatch(/"object":"refund"/)
    expect(output).toMatch(/"amount_cents":5000,"amount_captured_cents":4000,/)
    expect(output).toContain('"status":"voided"')
    expect(output).toContain('"description":"local receiver"')
    expect(output).toContain('"deleted":true')
    // The receiver verified the redelivered event, printed it, and exited: nothing listens on its port any more.
    expect(output).toMatch(/verified and applied: evt_[0-9a-f]{24} \(charge\.succeeded\)/)
    expect(await listens(Number(receiverPort))).toBe(false)
  }, 120_000)

  it('when it names an npm script anywhere, then package.json has it', async () => {
    const scripts = Object.keys(JSON.parse(await readFile(`${ROOT}/package.json`, 'utf8')).scripts)
    const named = [...readme.matchAll(/npm (?:run (?:--silent )?)?([a-z][\w:-]*)/g)]
      .map((match) => match[1]!.replace(/:$/, ''))
      .filter((name) => !['ci', 'install', 'pack', 'run'].includes(name))
    expect(named.length).toBeGreaterThan(10)
    for (const name of new Set(named))
      expect(scripts.includes(name) || ['start', 'test'].includes(name), name).toBe(true)
  })
})
