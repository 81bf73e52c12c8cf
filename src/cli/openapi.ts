// npm run openapi: writes openapi.yaml as the routes describe themselves (src/openapi/document.ts), and the typed
// client's resources from it (src/client/api.ts: src/openapi/client-source.ts). Run it after changing a route or a
// schema; test/openapi.test.ts fails while either committed file differs.
import { writeFile } from 'node:fs/promises'
import { pino } from 'pino'
import { parse } from 'yaml'
import { buildApp } from '../app.js'
import { connect } from '../db/connect.js'
import { CLIENT_API_FILE, formattedClientSource } from '../openapi/client-source.js'
import { createSimulatedProcessor } from '../processor/simulated.js'

const OPENAPI_PATH = new URL('../../openapi.yaml', import.meta.url)
const CLIENT_API_PATH = new URL(`../../${CLIENT_API_FILE}`, import.meta.url)

// The routes are only registered, never called: the pool never connects.
const sql = connect('postgres://unused@127.0.0.1:1/unused', { max: 1 })
const app = await buildApp({
  sql,
  processor: createSimulatedProcessor({ sql }),
  config: {},
  log: pino({ level: 'silent' }),
})
await app.ready()
const response = await app.inject({ method: 'GET', url: '/openapi.yaml' })
await app.close()
await sql.end({ timeout: 1 })
await writeFile(OPENAPI_PATH, response.body)
console.log(`wrote openapi.yaml (${response.body.split('\n').length} lines)`)
await writeFile(CLIENT_API_PATH, formattedClientSource(parse(response.body)))
console.log(`wrote ${CLIENT_API_FILE}`)
