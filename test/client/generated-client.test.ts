// A client generated from openapi.yaml by the common generators, with their defaults (openapi-typescript for the
// types, openapi-fetch for the calls), as an integrator would make one: it type-checks under --strict, a wrong call
// does not, and against a running server it charges, replays under the same key, and gets the 422 for another body.
import { execFile } from 'node:child_process'
import { symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAccount } from '../../src/accounts/api-keys.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { startServer, type ServerProcess } from '../helpers/processes.js'
import { scratchDir } from '../helpers/system.js'

const run = promisify(execFile)
const ROOT = new URL('../../', import.meta.url).pathname
const bin = (name: string) => join(ROOT, 'node_modules/.bin', name)

const program = `import createClient from 'openapi-fetch'
import type { paths } from './api.js'

const client = createClient<paths>({
  baseUrl: process.env.PAYMENTS_URL!,
  headers: { authorization: \`Bearer \${process.env.PAYMENTS_API_KEY}\` },
})
const key = crypto.randomUUID()
const body = { amount_cents: 2500, currency: 'usd', source: 'pm_card_visa' } as const
const header = { 'Idempotency-Key': key }
const first = await client.POST('/v1/charges', { params: { header }, body })
if (!first.data) throw new Error(\`no charge: \${JSON.stringify(first.error)}\`)
const replay = await client.POST('/v1/charges', { params: { header }, body })
const reused = await client.POST('/v1/charges', { params: { header }, body: { ...body, amount_cents: 9900 } })
const found = await client.GET('/v1/charges/{id}', { params: { path: { id: first.data.id } } })
console.log(JSON.stringify({
  created: first.response.status,
  status: first.data.status,
  replayed: replay.response.headers.get('idempotent-replayed'),
  sameCharge: replay.data?.id === first.data.id,
  reused: reused.response.status,
  reusedType: reused.error?.type,
  found: found.data?.amount_cents,
}))
`

let dir: string
let database: TestDatabase
let server: ServerProcess
beforeAll(async () => {
  dir = await scratchDir('generated-client-')
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        lib: ['es2022', 'dom'],
        skipLibCheck: true,
      },
    }),
  )
  await run(bin('openapi-typescript'), [join(ROOT, 'openapi.yaml'), '-o', join(dir, 'api.d.ts')])
  database = await createTestDatabase()
  server = await startServer({ DATABASE_URL: database.url })
}, 60_000)
afterAll(async () => {
  server?.child.kill('SIGKILL')
  await database?.drop()
})

const typeCheck = () =>
  run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir }).then(
    () => '',
    (error: { stdout?: string }) => error.stdout ?? 'failed',
  )

describe('a client generated from openapi.yaml (openapi-typescript + openapi-fetch, their defaults)', () => {
  it('when a charge, its replay and a 422 are written against it, then tsc --strict passes, and it runs against a server', async () => {
    await writeFile(join(dir, 'charge.ts'), program)
    expect(await typeCheck()).toBe('')
    const { api_key: apiKey } = await createAccount(database.sql, 'Generated client')
    const { stdout } = await run(process.execPath, ['--import', 'tsx', join(dir, 'charge.ts')], {
      cwd: dir,
      env: { ...process.env, PAYMENTS_URL: server.url, PAYMENTS_API_KEY: apiKey },
    })
    expect(JSON.parse(stdout)).toEqual({
      created: 201,
      status: 'succeeded',
      replayed: 'true',
      sameCharge: true,
      reused: 422,
      reusedType: 'https://payments.example.com/problems/idempotency-key-reused',
      found: 2500,
    })
  }, 60_000)

  it('when a call leaves out a required field, then tsc refuses it', async () => {
    await writeFile(join(dir, 'charge.ts'), program.replace("source: 'pm_card_visa' ", ''))
    expect(await typeCheck()).toMatch(/source/)
  }, 60_000)
})
