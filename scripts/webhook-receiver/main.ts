// npm run webhook:receiver -- --secret whsec_... [--port 4000] [--once] [--timeout 30]
// Listens for this service's webhooks, verifies them, and applies each event once (see receiver.ts), printing a
// line for each. With --once it exits after the first delivery it verified (status 0), or after --timeout seconds
// without one (status 1): a walkthrough can wait for it instead of killing it. It keeps its records in
// RECEIVER_DATABASE_URL, or in a database of its own beside the service's (scripts/example-database.ts).
import { createServer } from 'node:http'
import { parseArgs } from 'node:util'
import { main } from '../../src/cli/main.js'
import { exampleDatabase } from '../example-database.js'
import { createReceiver, prepareReceiverTables } from './receiver.js'

const { values } = parseArgs({
  options: {
    secret: { type: 'string' },
    port: { type: 'string', default: '4000' },
    once: { type: 'boolean', default: false },
    timeout: { type: 'string', default: '30' },
  },
})
const secret = values.secret ?? ''
if (!secret.startsWith('whsec_')) {
  console.error('usage: npm run webhook:receiver -- --secret whsec_... [--port 4000] [--once] [--timeout 30]')
  process.exit(2)
}
const port = Number(values.port)

await main('webhook:receiver', async () => {
  const database = await exampleDatabase('RECEIVER_DATABASE_URL', 'webhook_receiver')
  await prepareReceiverTables(database.sql)
  const receive = createReceiver({ sql: database.sql, secret })
  let finished!: (code: number) => void
  const done = new Promise<number>((resolve) => (finished = resolve))
  const server = createServer((request, response) => {
    // Only deliveries are POSTs: anything else (a probe of whether it listens yet) is answered and not logged.
    if (request.method !== 'POST') return void response.writeHead(405, { allow: 'POST' }).end()
    let body = ''
    request.setEncoding('utf8').on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      receive(body, request.headers)
        .then((result) => {
          const type = result.status === 200 ? (JSON.parse(body) as { type: string }).type : undefined
          console.log(
            result.status === 200
              ? `verified and ${result.body}: ${request.headers['webhook-id']} (${type})`
              : `refused (${result.status}): ${result.body}`,
          )
          response.writeHead(result.status, { 'content-type': 'text/plain' }).end(result.body)
          if (values.once && result.status === 200) finished(0)
        })
        .catch((error: unknown) => {
          console.error(error)
          response.writeHead(500).end('error')
        })
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(`port ${port} is taken (a receiver still running?): stop it, or pass another --port`)
          : error,
      ),
    )
    server.listen(port, '127.0.0.1', resolve)
  })
  console.log(
    `webhook receiver listening on http://127.0.0.1:${port}${values.once ? ' until its first verified delivery' : ''}`,
  )
  if (values.once)
    setTimeout(() => {
      console.error(`no verified delivery within ${values.timeout} s`)
      finished(1)
    }, Number(values.timeout) * 1000).unref()
  process.once('SIGTERM', () => finished(0))
  process.once('SIGINT', () => finished(0))
  const code = await done
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  await database.close()
  process.exitCode = code
})
