// The plugin on a route of a fork's own: how any route opts in, and what an optional key means.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAccount } from '../../src/accounts/api-keys.js'
import auth from '../../src/plugins/auth.js'
import errorHandler from '../../src/plugins/error-handler.js'
import idempotency from '../../src/plugins/idempotency.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase
let app: FastifyInstance
let authorization: string

beforeAll(async () => {
  database = await createTestDatabase()
  await database.sql`create table notes (id serial primary key, text text not null)`
  app = Fastify({ loggerInstance: pino({ level: 'silent' }) as FastifyBaseLogger })
  await app.register(errorHandler)
  await app.register(auth, { sql: database.sql })
  await app.register(idempotency, { sql: database.sql, timing: { ttlSeconds: 60, leaseSeconds: 30 } })
  await app.register(async (scope) => {
    scope.addHook('onRequest', scope.authenticate)
    scope.post('/notes', { config: { idempotency: { required: false } } }, async (request, reply) =>
      reply.transact(async (tx) => {
        const [note] = await tx`insert into notes (text) values (${(request.body as { text: string }).text}) returning id, text`
        return { status: 201, body: note }
      }),
    )
  })
  await app.ready()
  authorization = `Bearer ${(await createAccount(database.sql, 'Notes')).api_key}`
})
afterAll(async () => {
  await app.close()
  await database.drop()
})

const postNote = (text: string, key?: string) =>
  app.inject({ method: 'POST', url: '/notes', headers: { authorization, ...(key && { 'idempotency-key': key }) }, payload: { text } })
const noteCount = async () => (await database.sql`select count(*)::int as count from notes`)[0]!.count

describe('a route with an optional key', () => {
  it('when no key is sent, then every request does the work and nothing is recorded', async () => {
    const before = await noteCount()
    expect((await postNote('a')).statusCode).toBe(201)
    expect((await postNote('a')).statusCode).toBe(201)
    expect(await noteCount()).toBe(before + 2)
    const [keys] = await database.sql`select count(*)::int as count from idempotency_keys`
    expect(keys!.count).toBe(0)
  })

  it('when a key is sent, then the retry is replayed and the work is done once', async () => {
    const before = await noteCount()
    const first = await postNote('b', 'note-1')
    const retry = await postNote('b', 'note-1')
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.rawPayload.equals(first.rawPayload)).toBe(true)
    expect(await noteCount()).toBe(before + 1)
  })

  it('when the key is malformed, then it is still rejected', async () => {
    const response = await postNote('c', 'x'.repeat(300))
    expect(response.statusCode).toBe(400)
    expect(response.json().type).toMatch(/\/idempotency-key-invalid$/)
  })
})
