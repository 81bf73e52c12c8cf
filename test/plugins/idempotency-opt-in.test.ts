// The plugin on routes of a fork's own: how any route opts in, what an optional key means, and how a route that
// calls something outside the service opts into the recovery of unknown outcomes.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAccount } from '../../src/accounts/api-keys.js'
import type { Sql, Transaction } from '../../src/db/connect.js'
import auth from '../../src/plugins/auth.js'
import errorHandler from '../../src/plugins/error-handler.js'
import idempotency, { type RouteResponse } from '../../src/plugins/idempotency.js'
import { recoverAbandonedClaims } from '../../src/recovery/recover-abandoned-claims.js'
import type { Recovery } from '../../src/idempotency/recovery.js'
import { Problem } from '../../src/problems.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'

let database: TestDatabase
let app: FastifyInstance
let authorization: string

/**
 * The fork's own downstream: a publisher that remembers what it published under each idempotency key (as a real
 * one would), and can be told to lose its next answer.
 */
function publisher(sql: Sql) {
  let loseNextAnswer = false
  return {
    loseNextAnswer: () => {
      loseNextAnswer = true
    },
    async publish(text: string, idempotencyKey: string): Promise<string> {
      const [row] = await sql<{ ref: string }[]>`
        insert into published (key, text, ref) values (${idempotencyKey}, ${text}, 'pub_' || md5(${idempotencyKey}))
        on conflict (key) do update set key = excluded.key returning ref`
      if (loseNextAnswer) {
        loseNextAnswer = false
        throw new Problem('service-unavailable', 'the publisher did not answer')
      }
      return row!.ref
    },
    async find(idempotencyKey: string): Promise<string | undefined> {
      const [row] = await sql<{ ref: string }[]>`select ref from published where key = ${idempotencyKey}`
      return row?.ref
    },
  }
}
let pub: ReturnType<typeof publisher>

/** Records a published note: the route and the recovery both end here, so both produce the same response. */
async function recordNote(tx: Transaction, text: string, ref: string): Promise<RouteResponse> {
  const [note] = await tx`insert into notes (text, ref) values (${text}, ${ref}) returning id, text, ref`
  return { status: 201, body: note }
}

// The extension point: a Recovery, named by the route that calls out (and given to the recovery worker).
const noteRecovery: Recovery<string> = {
  name: 'note',
  lookup: (claim) => pub.find(claim.operationId),
  record: (tx, claim, ref) => recordNote(tx, (claim.request.body as { text: string }).text, ref),
}

beforeAll(async () => {
  database = await createTestDatabase()
  await database.sql`create table notes (id serial primary key, text text not null, ref text)`
  await database.sql`create table published (key text primary key, text text not null, ref text not null)`
  pub = publisher(database.sql)
  app = Fastify({ loggerInstance: pino({ level: 'silent' }) as FastifyBaseLogger })
  await app.register(errorHandler)
  await app.register(auth, { sql: database.sql })
  await app.register(idempotency, {
    sql: database.sql,
    timing: { ttlSeconds: 600, leaseSeconds: 30, recoveryGraceSeconds: 60 },
  })
  await app.register(async (scope) => {
    scope.addHook('onRequest', scope.authenticate)
    scope.post('/notes', { config: { idempotency: { required: false } } }, async (request, reply) =>
      reply.idempotent((operation) =>
        operation.complete(async (tx) => {
          const [note] =
            await tx`insert into notes (text) values (${(request.body as { text: string }).text}) returning id, text`
          return { status: 201, body: note }
        }),
      ),
    )
    // Calls out first, outside any transaction, then records and completes.
    scope.post(
      '/notes/published',
      { config: { idempotency: { required: true, recovery: noteRecovery } } },
      async (request, reply) =>
        reply.idempotent(async (operation) => {
          const { text } = request.body as { text: string }
          const ref = await operation.callOut((idempotencyKey) => pub.publish(text, idempotencyKey))
          return operation.complete((tx) => recordNote(tx, text, ref))
        }),
    )
    // The same route without its Recovery: a forgotten step.
    scope.post('/notes/unrecoverable', { config: { idempotency: { required: true } } }, async (request, reply) =>
      reply.idempotent((operation) => {
        const published = operation.callOut((idempotencyKey) =>
          pub.publish((request.body as { text: string }).text, idempotencyKey),
        )
        // What the error handler would log (at error level) with its 500, shown to the test.
        return published.then(
          (ref) => reply.send({ ref }),
          (error: Error) => reply.code(500).send({ error: error.message }),
        )
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

const post = (url: string, text: string, key?: string) =>
  app.inject({
    method: 'POST',
    url,
    headers: { authorization, ...(key && { 'idempotency-key': key }) },
    payload: { text },
  })
const postNote = (text: string, key?: string) => post('/notes', text, key)
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

describe('a route of its own with a Recovery', () => {
  it('when its downstream acted and the answer was lost, then the recovery worker records it and the retry replays it', async () => {
    pub.loseNextAnswer()
    const lost = await post('/notes/published', 'hello', 'publish-1')
    expect(lost.statusCode).toBe(503)
    const [claim] = await database.sql`select request, completed_at from idempotency_keys where key = 'publish-1'`
    // The claim keeps the name of the route's Recovery, not its path, with the validated request, and the processor
    // account its calls go to (none linked: the platform's).
    expect(claim).toEqual({
      request: { recovery: 'note', params: {}, body: { text: 'hello' }, processorAccount: null },
      completed_at: null,
    })

    const run = await recoverAbandonedClaims(
      database.sql,
      [noteRecovery],
      { graceSeconds: 0, leaseSeconds: 30, batchSize: 10 },
      pino({ level: 'silent' }),
    )

    expect(run).toEqual({ settled: 1, released: 0, failed: 0 })
    const notes = await database.sql`select text, ref from notes where text = 'hello'`
    expect(notes).toHaveLength(1)
    const retry = await post('/notes/published', 'hello', 'publish-1')
    expect(retry.statusCode).toBe(201)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.json()).toMatchObject({ text: 'hello', ref: notes[0]!.ref })
  })

  it('when a route calls out without a Recovery, then nothing goes out, and the error names the step that was forgotten', async () => {
    const response = await post('/notes/unrecoverable', 'lost for ever', 'unrecoverable-1')
    expect(response.statusCode).toBe(500)
    expect(response.json().error).toBe(
      'POST /notes/unrecoverable calls out without a Recovery: name one where it declares idempotency (a route: its ' +
        "config: { idempotency: { recovery } }; a task: its KeyedTask's recovery) (docs/extending.md)",
    )
    expect(await database.sql`select 1 from published where text = 'lost for ever'`).toHaveLength(0)
  })

  it('when a route has no Recovery, then its claims keep no request', async () => {
    await postNote('d', 'note-plain')
    const [claim] = await database.sql`select request from idempotency_keys where key = 'note-plain'`
    expect(claim!.request).toBeNull()
  })
})
