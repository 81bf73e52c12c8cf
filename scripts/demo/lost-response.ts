// npm run demo:lost-response   (with the server running: npm start)
// The story this service exists for, played against a running server through a proxy that loses the first
// answer: the shipped client retries with the same key and the customer is charged once; a client that makes a
// new key per attempt charges twice. PAYMENTS_URL (default http://127.0.0.1:$PORT, 3000 when PORT is unset);
// PAYMENTS_API_KEY, or one is made with account:create.
import { execFileSync } from 'node:child_process'
import { createClient } from 'payments-api/client'
import { main } from '../../src/cli/main.js'
import { localApiUrl } from '../local-api.js'
import { startLossyProxy } from './lossy-proxy.js'
import { naiveCreateCharge } from './naive-client.js'

const api = localApiUrl()

await main('demo:lost-response', async () => {
  const ready = await fetch(`${api}/readyz`).catch(() => undefined)
  if (!ready?.ok)
    throw new Error(
      `no server answers at ${api}; start one with npm start, or set PORT (or PAYMENTS_URL) to where it listens`,
    )
  const apiKey = process.env.PAYMENTS_API_KEY ?? newAccountKey()
  const proxy = await startLossyProxy(api)
  const run = `demo_${Date.now().toString(36)}`
  const order = (n: number) => ({
    amount_cents: 1999,
    currency: 'usd' as const,
    source: 'pm_card_visa',
    description: `lost-response demo, order ${n}`,
    metadata: { demo: run, order: String(n) },
  })
  console.log(`Lost-response demo against ${api}, through a proxy (${proxy.url}) that lets each request reach the`)
  console.log('server and then loses its answer, the first time. The customer pays 19.99 for each order.\n')

  console.log('1. The shipped client (payments-api/client): one Idempotency-Key per order, the same on every retry')
  proxy.dropNext(1)
  const right = await createClient({ baseUrl: proxy.url, apiKey }).charges.create(order(1))
  showAttempts(proxy.log.splice(0))
  console.log(`   -> ${right.data.id}, after ${right.attempts} attempts; Idempotent-Replayed: ${right.replayed}`)
  console.log(`   charges for order 1: ${await countCharges(apiKey, run, '1')}\n`)

  console.log('2. A client that makes a new key on each attempt (the mistake)')
  proxy.dropNext(1)
  const wrong = await naiveCreateCharge(proxy.url, apiKey, order(2))
  showAttempts(proxy.log.splice(0))
  console.log(`   -> ${wrong.id}, after ${wrong.attempts} attempts`)
  console.log(`   charges for order 2: ${await countCharges(apiKey, run, '2')}\n`)

  console.log('Same failure, same retries: the key held still is the difference between charging once and twice.')
  await proxy.close()
})

function showAttempts(log: Awaited<ReturnType<typeof startLossyProxy>>['log']) {
  for (const [index, entry] of log.entries()) {
    const lost = entry.dropped ? ', answer lost on the way back' : ''
    console.log(
      `   attempt ${index + 1}: ${entry.method} ${entry.path}  Idempotency-Key: ${entry.idempotencyKey}  -> ` +
        `${entry.status}${lost}`,
    )
  }
}

/** The charges of this run's order, counted by the API itself (the charges created since the run began). */
async function countCharges(apiKey: string, run: string, order: string): Promise<number> {
  let count = 0
  for await (const charge of createClient({ baseUrl: api, apiKey }).charges.all({ limit: 100 })) {
    if (charge.metadata.demo === run && charge.metadata.order === order) count++
    if (charge.metadata.demo !== run) break // older than this run
  }
  return count
}

function newAccountKey(): string {
  const output = execFileSync('npm', ['run', '--silent', 'account:create', '--', '--name', 'Lost-response demo'], {
    encoding: 'utf8',
  })
  return (JSON.parse(output.trim().split('\n').at(-1) ?? '') as { api_key: string }).api_key
}
