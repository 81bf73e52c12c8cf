// npm run webhook:receiver -- --secret whsec_... [--port 4000]
// Listens for this service's webhooks, verifies them, and applies each event once (see receiver.ts). It keeps
// its records in RECEIVER_DATABASE_URL, or in a database of its own beside the service's (scripts/example-database.ts).
import { createServer } from 'node:http'
import { parseArgs } from 'node:util'
import { main } from '../../src/cli/main.js'
import { exampleDatabase } from '../example-database.js'
import { createReceiver, prepareReceiverTables } from './receiver.js'

const { values } = parseArgs({ options: { secret: { type: 'string' }, port: { type: 'string', default: '4000' } } })
if (!values.secret?.startsWith('whsec_')) {
  console.error('usage: npm run webhook:receiver -- --secret whsec_... [--port 4000]')
  process.exit(2)
}

await main('webhook:receiver', async () => {
  const { sql } = await exampleDatabase('RECEIVER_DATABASE_URL', 'webhook_receiver')
  await prepareReceiverTables(sql)
  const receive = createReceiver({ sql, secret: values.secret! })
  const server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8').on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      receive(body, request.headers)
        .then((result) => {
          console.log(JSON.stringify({ webhook_id: request.headers['webhook-id'], status: result.status, result: result.body }))
          response.writeHead(result.status, { 'content-type': 'text/plain' }).end(result.body)
        })
        .catch((error: unknown) => {
          console.error(error)
          response.writeHead(500).end('error')
        })
    })
  })
  server.listen(Number(values.port), '127.0.0.1', () => console.log(`webhook receiver listening on http://127.0.0.1:${values.port}`))
  await new Promise(() => {})
})
