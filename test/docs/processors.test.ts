// docs/processors.md cannot go stale: its offline walkthrough runs here as written, at the PORT a reader chose (only
// the test server's own port swapped for a free one): the Stripe test server from its npm script, in the
// background, the service started with the settings the page gives, and the page's curl, which makes an API key and
// a charge whose processor_reference is the PaymentIntent. Then a bank debit settles at the test server, and its
// signed webhook moves the charge in the service; Stripe Connect's walkthrough links a merchant to a connected
// account of the test server and its charge lands there. The test server, killed as the page says, stops.
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
  for (const child of started) {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // the group is gone
    }
  }
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

/** Runs a block as a reader pastes it (stopping at the first failure), to its end: its exit code and output. */
async function runToEnd(block: string, env: Record<string, string>): Promise<{ code: number; output: string }> {
  const shell = spawn('bash', ['-euo', 'pipefail', '-c', block], { cwd: ROOT, env: { ...process.env, ...env } })
  let output = ''
  shell.stdout.on('data', (chunk) => (output += chunk))
  shell.stderr.on('data', (chunk) => (output += chunk))
  const [code] = await once(shell, 'exit')
  return { code, output }
}

describe('docs/processors.md', () => {
  it("when its offline walkthrough runs as written at the reader's PORT, then the charge is a PaymentIntent of the Stripe test server", async () => {
    database = await createTestDatabase()
    const [stripePort, servicePort] = [String(await freePort()), String(await freePort())]
    // The reader's exports: the PORT they chose, and their database (here a test database).
    const reader = { PORT: servicePort, STRIPE_PORT: stripePort, DATABASE_URL: database.url }
    const offline = shellBlocks.find((block) => block.includes('stripe:test-server'))!
    const printed = await run(offline, { ...reader, LOG_FORMAT: 'json' }, /Server listening/)
    expect(printed).toContain(`STRIPE_API_URL=http://127.0.0.1:${stripePort}`)

    const curl = shellBlocks.find((block) => block.includes('curl'))!
    const charged = await runToEnd(curl, reader)
    expect(charged.code, charged.output).toBe(0)
    expect(JSON.parse(charged.output)).toMatchObject({
      object: 'charge',
      status: 'succeeded',
      processor_reference: expect.stringMatching(/^pi_/),
    })

    const { api_key: apiKey } = await createAccount(database.sql, 'Docs')
    const api = `http://127.0.0.1:${servicePort}/v1/charges`
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }
    const debit = {
      amount_cents: 4000,
      currency: 'usd',
      source: 'pm_usBankAccount_success',
      mandate: { ip_address: '203.0.113.7', user_agent: 'docs' },
    }
    const processing = (await (
      await fetch(api, {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': crypto.randomUUID() },
        body: JSON.stringify(debit),
      })
    ).json()) as { id: string; status: string }
    expect(processing).toMatchObject({ status: 'processing' })
    // The test server settles it after --settle-after seconds and sends payment_intent.succeeded, signed.
    let status = processing.status
    while (status === 'processing') {
      await new Promise((resolve) => setTimeout(resolve, 200))
      status = ((await (await fetch(`${api}/${processing.id}`, { headers })).json()) as { status: string }).status
    }
    expect(status).toBe('succeeded')

    // Stripe Connect as the page walks it: a connected account, a merchant linked to it, its charge made there.
    const connect = await runToEnd(shellBlocks.find((block) => block.includes('account:link'))!, reader)
    expect(connect.code, connect.output).toBe(0)
    const [link, price, payment, platform, fees, books, compared] = connect.output.trim().split('\n')
    expect(JSON.parse(link!)).toMatchObject({ id: expect.stringMatching(/^acct_/), processorAccount: /^acct_/ })
    expect(JSON.parse(price!)).toMatchObject({ currency: 'usd', price: { percentBasisPoints: 100, fixedAmount: 20 } })
    expect(JSON.parse(payment!)).toMatchObject({
      object: 'payment_intent',
      status: 'succeeded',
      amount: 2500,
      application_fee_amount: 45,
    })
    expect(platform).toBe('404')
    expect(JSON.parse(fees!)).toEqual([
      ['processor_fee', 103],
      ['application_fee', 45],
    ])
    expect(JSON.parse(books!)).toMatchObject({ collected_cents: 45, refunded_cents: 0, net_cents: 45, fees: 1 })
    expect(JSON.parse(compared!)).toMatchObject({
      books: { collected_cents: 45, refunded_cents: 0 },
      processor: { collected_cents: 45, refunded_cents: 0 },
      difference_cents: 0,
      agrees: true,
    })
  }, 120_000)

  it('when the test server started in the background is killed as the page says, then nothing listens on its port', async () => {
    const port = String(await freePort())
    const lines = shellBlocks.find((block) => block.includes('stripe:test-server'))!.split('\n')
    const start = lines.slice(0, lines.findIndex((line) => line.startsWith('STRIPE_SERVER=$!')) + 1).join('\n')
    const script =
      `${start}\nuntil curl -s -o /dev/null http://127.0.0.1:${port}/; do sleep 0.2; done\nkill ` +
      `$STRIPE_SERVER\nwait $STRIPE_SERVER || true\ncurl -s -o /dev/null http://127.0.0.1:${port}/ && echo still ` +
      `listening || echo stopped`
    const shell = spawn('bash', ['-c', script], {
      cwd: ROOT,
      env: { ...process.env, PORT: '3999', STRIPE_PORT: port },
      detached: true,
    })
    started.push(shell)
    let output = ''
    shell.stdout.on('data', (chunk) => (output += chunk))
    await once(shell, 'exit')
    expect(output.trim().split('\n').at(-1)).toBe('stopped')
  }, 60_000)
})
