// docs/processors.md cannot go stale: its offline walkthrough runs here as written (only the ports swapped for free
// ones): the Stripe test server from its npm script, the service started with the settings the page gives, and the
// page's curl, which must make a charge whose processor_reference is the PaymentIntent. Then a bank debit settles
// at the test server, and its signed webhook moves the charge in the service.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { createAccount } from '../../src/accounts/api-keys.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { freePort } from '../helpers/system.js'

const ROOT = new URL('../../', import.meta.url).pathname
const page = await readFile(`${ROOT}docs/processors.md`, 'utf8')
const shellBlocks = [...page.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!)

const started: ChildProcess[] = []
let database: TestDatabase | undefined
afterAll(async () => {
  for (const child of started) process.kill(-child.pid!, 'SIGKILL')
  await database?.drop()
})

/** Runs a command line in a process group of its own; resolves with its output once it matches `ready`. */
async function run(line: string, env: Record<string, string>, ready: RegExp): Promise<string> {
  const child = spawn('bash', ['-c', line], { cwd: ROOT, env: { ...process.env, ...env }, detached: true })
  started.push(child)
  let output = ''
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk
      if (ready.test(output)) resolve(output)
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    void once(child, 'exit').then(([code]) => reject(new Error(`"${line}" exited with ${code}:\n${output}`)))
  })
}

describe('docs/processors.md', () => {
  it('when its offline walkthrough runs as written, then the charge is a PaymentIntent of the Stripe test server', async () => {
    database = await createTestDatabase()
    const [stripePort, servicePort] = [String(await freePort()), String(await freePort())]
    const offline = shellBlocks
      .find((block) => block.includes('stripe:test-server'))!
      .replaceAll('12111', stripePort)
      .replaceAll('127.0.0.1:3000', `127.0.0.1:${servicePort}`)
      .split('\n')
    const printed = await run(offline[0]!, {}, /STRIPE_WEBHOOK_SECRET=\S+/)
    expect(printed).toContain(`STRIPE_API_URL=http://127.0.0.1:${stripePort}`)
    // The service's command, after the line that says what the server prints.
    const service = offline.slice(offline.findIndex((line) => line.startsWith('# prints')) + 1).join('\n')
    await run(service, { DATABASE_URL: database.url, PORT: servicePort, LOG_FORMAT: 'json' }, /Server listening/)

    const { api_key: apiKey } = await createAccount(database.sql, 'Docs')
    const curl = shellBlocks.find((block) => block.startsWith('curl'))!.replaceAll('127.0.0.1:3000', `127.0.0.1:${servicePort}`)
    const shell = spawn('bash', ['-euo', 'pipefail', '-c', curl], { cwd: ROOT, env: { ...process.env, API_KEY: apiKey } })
    let output = ''
    shell.stdout.on('data', (chunk) => (output += chunk))
    const [code] = await once(shell, 'exit')
    expect(code).toBe(0)
    expect(JSON.parse(output)).toMatchObject({ object: 'charge', status: 'succeeded', processor_reference: expect.stringMatching(/^pi_/) })

    const api = `http://127.0.0.1:${servicePort}/v1/charges`
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }
    const debit = { amount_cents: 4000, currency: 'usd', source: 'pm_usBankAccount_success', mandate: { ip_address: '203.0.113.7', user_agent: 'docs' } }
    const processing = (await (await fetch(api, { method: 'POST', headers: { ...headers, 'idempotency-key': crypto.randomUUID() }, body: JSON.stringify(debit) })).json()) as { id: string; status: string }
    expect(processing).toMatchObject({ status: 'processing' })
    // The test server settles it after --settle-after seconds and sends payment_intent.succeeded, signed.
    let status = processing.status
    while (status === 'processing') {
      await new Promise((resolve) => setTimeout(resolve, 200))
      status = ((await (await fetch(`${api}/${processing.id}`, { headers })).json()) as { status: string }).status
    }
    expect(status).toBe('succeeded')
  }, 120_000)
})
