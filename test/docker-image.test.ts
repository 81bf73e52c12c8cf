// The Dockerfile, played without Docker (no engine runs here, nor in many a fork's CI): each stage's COPY lines copy
// what they name into a directory of that stage, its `npm run build` runs there, and the last stage's CMD starts the
// server from what was copied, against a test database. A file the image needs and the Dockerfile (or the build
// script) leaves out fails here: the routes' prose (src/routes/*.md, read when the document is built), the
// migrations, the spec. Dependencies are not installed again: node_modules is linked (what `npm ci` installs is
// npm's to get right), so a runtime dependency listed only in devDependencies is not caught here.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { cp, mkdir, readFile, rm, symlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { operationProse } from '../src/openapi/prose.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'
import { scratchDir } from './helpers/system.js'

// The build stage compiles the whole service (tsc), beside other test files on two cores.
vi.setConfig({ testTimeout: 240_000 })

const ROOT = new URL('../', import.meta.url).pathname

interface Stage {
  name: string
  dir: string
  workdir: string
  env: Record<string, string>
  cmd?: string[]
}

/** The Dockerfile's instructions, one per line once continued lines are joined; comments and blank lines left out. */
function instructions(dockerfile: string): { keyword: string; rest: string }[] {
  return dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [keyword = '', ...rest] = line.split(/\s+/)
      return { keyword: keyword.toUpperCase(), rest: rest.join(' ') }
    })
}

/** What `npm ci` and patch-package do is already in node_modules; the build is the one RUN this test plays. */
const RUNS_NOT_PLAYED = [/^npm ci\b/, /^npx patch-package$/, /^npm cache clean --force$/]

async function run(command: string, args: string[], cwd: string): Promise<void> {
  const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const [code] = await once(child, 'exit')
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} in ${cwd} exited with ${code}:\n${output}`)
}

/** Plays the Dockerfile's stages into directories under `root`; the last stage. */
async function playDockerfile(root: string): Promise<Stage> {
  const stages: Stage[] = []
  const current = () => {
    const stage = stages.at(-1)
    if (!stage) throw new Error('an instruction before the first FROM')
    return stage
  }
  /** A path in a stage as the image names it (absolute, or relative to WORKDIR), in the stage's directory. */
  const inStage = (stage: Stage, path: string) =>
    join(stage.dir, path.startsWith('/') ? path.slice(stage.workdir.length) : path)
  for (const { keyword, rest } of instructions(await readFile(join(ROOT, 'Dockerfile'), 'utf8'))) {
    if (keyword === 'FROM') {
      const name = /\bAS\s+(\S+)/i.exec(rest)?.[1] ?? String(stages.length)
      const dir = join(root, name)
      await mkdir(dir)
      await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
      stages.push({ name, dir, workdir: '/', env: {} })
    } else if (keyword === 'WORKDIR') {
      current().workdir = rest
    } else if (keyword === 'ENV') {
      for (const pair of rest.split(/\s+/)) {
        const [name = '', value = ''] = pair.split('=')
        current().env[name] = value
      }
    } else if (keyword === 'COPY') {
      const words = rest.split(/\s+/)
      const from = words[0]?.startsWith('--from=') ? words.shift()?.slice('--from='.length) : undefined
      const destination = words.pop() ?? ''
      const source = from ? stages.find((stage) => stage.name === from) : undefined
      if (from && !source) throw new Error(`COPY --from=${from}: no such stage`)
      const intoDirectory = words.length > 1 || destination.endsWith('/')
      for (const word of words) {
        const origin = source ? inStage(source, word) : join(ROOT, word)
        const target = intoDirectory
          ? join(inStage(current(), destination), word.split('/').pop() ?? word)
          : inStage(current(), destination)
        await mkdir(dirname(target), { recursive: true })
        await cp(origin, target, { recursive: true })
      }
    } else if (keyword === 'RUN') {
      for (const step of rest.split('&&').map((each) => each.trim())) {
        if (step === 'npm run build') await run('npm', ['run', '--silent', 'build'], current().dir)
        else if (!RUNS_NOT_PLAYED.some((known) => known.test(step)))
          throw new Error(`this test does not know how to play RUN ${step}: teach it (test/docker-image.test.ts)`)
      }
    } else if (keyword === 'CMD') {
      current().cmd = JSON.parse(rest)
    }
  }
  return current()
}

describe('the Dockerfile, played without Docker', () => {
  let root: string
  let database: TestDatabase
  beforeAll(async () => {
    root = await scratchDir('docker-image-')
    database = await createTestDatabase()
  })
  afterAll(async () => {
    await database?.drop()
    await rm(root, { recursive: true, force: true })
  })

  it('when its stages are played and its CMD run, then the server starts from the image’s files and serves the document with the routes’ prose', async () => {
    const image = await playDockerfile(root)
    const [command, ...args] = image.cmd ?? []
    expect(command, 'the last stage has a CMD').toBe('node')
    const child = spawn(process.execPath, args, {
      cwd: image.dir,
      // Its environment, but loopback (the image listens on every interface) and a port of the system's choosing.
      env: { PATH: process.env.PATH, ...image.env, HOST: '127.0.0.1', PORT: '0', DATABASE_URL: database.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    try {
      let output = ''
      const url = await new Promise<string>((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          output += chunk
          const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
          if (match?.[1]) resolve(match[1])
        }
        child.stdout.on('data', onData)
        child.stderr.on('data', onData)
        child.once('exit', (code) => reject(new Error(`the image's server exited with ${code}:\n${output}`)))
      })
      const document = (await (await fetch(`${url}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, { operationId?: string; description?: string }>>
      }
      const prose = operationProse(new URL('../src/routes/', import.meta.url))
      const createCharge = Object.values(document.paths)
        .flatMap((path) => Object.values(path))
        .find((operation) => operation.operationId === 'createCharge')
      expect(createCharge?.description).toBe(prose.get('createCharge'))
      expect((await fetch(`${url}/readyz`)).status).toBe(200)
    } finally {
      child.kill('SIGTERM')
      if (child.exitCode === null) await once(child, 'exit')
    }
  })
})
