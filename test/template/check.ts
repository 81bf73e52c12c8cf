// npm run check:template: the proof that the template tells a forker what they forgot. In a copy of the repository it
// adds withdrawals (test/template/withdrawals) by docs/extending.md's checklist (steps.ts): with every step, the
// type-check and the tests pass; then, for each step, a copy with every step but that one, where the check named for
// it must fail, saying what was forgotten. A step whose omission no check names fails this run.
import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { startTestServer } from '../global-setup.js'
import { type Check, STEPS, type Step } from './steps.js'
import { applyStructuralEdit, MissingStructure } from './structure.js'

const run = promisify(execFile)
const ROOT = new URL('../../', import.meta.url).pathname
const EXAMPLE = join(ROOT, 'test/template/withdrawals')
const PARALLEL = 2
/** What a fork whose shared files no longer have what the checklist adds to does: docs/extending.md says the same. */
const NO_LONGER_A_TEMPLATE =
  'If your fork has moved past the template (it renamed or removed that declaration on purpose), delete ' +
  'test/template/: CI then skips this check (docs/extending.md, "When your fork outgrows the template").'

/** The files git tracks or would (not ignored), as they are in the working tree, and node_modules linked. */
async function copyOfRepository(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'template-check-'))
  const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  })
  for (const file of stdout.split('\0').filter(Boolean)) {
    if (file.startsWith('test/template/')) continue
    await mkdir(dirname(join(dir, file)), { recursive: true })
    await cp(join(ROOT, file), join(dir, file)).catch(() => {}) // a file deleted in the working tree
  }
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  return dir
}

async function nextMigration(dir: string): Promise<string> {
  const numbers = (await readdir(join(dir, 'db/migrations')))
    .map((name) => Number(name.slice(0, 4)))
    .filter(Number.isFinite)
  return `db/migrations/${String(Math.max(...numbers) + 1).padStart(4, '0')}_withdrawals.sql`
}

/**
 * Applies the steps to the copy; `strict`: a command that fails fails the run (only with every step applied).
 * `forCheck`: the check that will read the copy. tsc reads only TypeScript, so a command that makes another file
 * (openapi.yaml alone) is not run for it; npm run openapi makes src/client/api.ts too, so it runs.
 */
async function apply(dir: string, steps: Step[], strict: boolean, forCheck?: Check): Promise<void> {
  for (const step of steps) {
    for (const file of step.adds ?? []) {
      const target = file.endsWith('WITHDRAWALS.sql') ? await nextMigration(dir) : file
      await mkdir(dirname(join(dir, target)), { recursive: true })
      await cp(join(EXAMPLE, file), join(dir, target))
    }
    for (const { file, ...edit } of step.edits ?? []) {
      const path = join(dir, file)
      try {
        await writeFile(path, applyStructuralEdit(file, await readFile(path, 'utf8'), edit))
      } catch (error) {
        if (!(error instanceof MissingStructure)) throw error
        throw new Error(
          `step "${step.name}": ${error.message}, where test/template/steps.ts adds to it. ${NO_LONGER_A_TEMPLATE}`,
        )
      }
    }
    const runs = step.runs
    if (runs && !(forCheck?.kind === 'tsc' && !runs.makes.some((file) => /\.tsx?$/.test(file)))) {
      const done = await run('bash', ['-c', runs.command], { cwd: dir }).then(
        () => true,
        (error: { stderr?: string }) =>
          strict ? Promise.reject(new Error(`${runs.command}: ${error.stderr}`)) : false,
      )
      if (!done) console.log(`  (${runs.command} failed, as a copy missing a step may)`)
    }
  }
}

// The type-check of the copy with every step leaves what it learned (tsc --incremental), and each copy with one step
// left out starts from it: tsc then checks again only what that step's absence changes (a full check of each copy
// was most of this run's time).
const BUILD_INFO = 'template-check.tsbuildinfo'
const learned = join(await mkdtemp(join(tmpdir(), 'template-check-types-')), BUILD_INFO)

/** Runs a check in the copy: whether it passed, what it printed, and how long it took (CI's time is counted). */
async function check(dir: string, what: Check): Promise<{ passed: boolean; output: string; took: string }> {
  const started = performance.now()
  const took = () => `${((performance.now() - started) / 1000).toFixed(0)} s`
  if (what.kind === 'tsc') await cp(learned, join(dir, BUILD_INFO)).catch(() => {}) // none yet: the first check
  const [command, args] =
    what.kind === 'tsc'
      ? ['npx', ['tsc', '-p', '.', '--incremental', '--tsBuildInfoFile', BUILD_INFO]]
      : ['npx', ['vitest', 'run', ...what.files]]
  const plain = (text: string) => text.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '')
  return run(command, args, {
    cwd: dir,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NO_COLOR: '1', TEST_DATABASE_URL: server.url },
  }).then(
    ({ stdout, stderr }) => ({ passed: true, output: plain(stdout + stderr), took: took() }),
    (error: { stdout?: string; stderr?: string }) => ({
      passed: false,
      output: plain(`${error.stdout ?? ''}${error.stderr ?? ''}`),
      took: took(),
    }),
  )
}

async function withCopy<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await copyOfRepository()
  try {
    return await work(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

// `-- --keep`: only the copy with every step, kept for a failing check to be run in it by hand.
if (process.argv.includes('--keep')) {
  const dir = await copyOfRepository()
  await apply(dir, STEPS, true)
  console.log(`check:template: every step applied in ${dir} (kept; remove it when done)`)
  process.exit(0)
}

console.log(`check:template: withdrawals by the checklist, ${STEPS.length} steps`)
const failures: string[] = []

// The copies' test runs share one PostgreSQL server, each run migrating a template of its own on it (a server of
// their own was eight starts of a cluster).
const server = await startTestServer()
try {
  await withCopy(async (dir) => {
    await apply(dir, STEPS, true)
    const checks: Check[] = [
      { kind: 'tsc' },
      {
        kind: 'vitest',
        files: [
          'test/withdrawals/withdrawals.test.ts',
          'test/openapi.test.ts',
          'test/client/client.test.ts',
          'test/client/types.test.ts',
          'test/processor/contract.test.ts',
          'test/contract-requests.test.ts',
        ],
      },
    ]
    for (const each of checks) {
      const result = await check(dir, each)
      if (each.kind === 'tsc') await cp(join(dir, BUILD_INFO), learned).catch(() => {})
      console.log(`  every step: ${each.kind} ${result.passed ? 'passes' : 'FAILS'} (${result.took})`)
      if (!result.passed) failures.push(`with every step, ${each.kind} fails:\n${result.output.slice(-3000)}`)
    }
  })

  const queue = [...STEPS]
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      for (let step = queue.shift(); step; step = queue.shift()) {
        const omitted = step
        await withCopy(async (dir) => {
          await apply(
            dir,
            STEPS.filter((each) => each !== omitted),
            false,
            omitted.catchesOmission,
          )
          const result = await check(dir, omitted.catchesOmission)
          const said =
            result.output.split('\n').find((line) => omitted.says.test(line)) ??
            (omitted.says.test(result.output) ? omitted.says.exec(result.output)![0] : undefined)
          if (!result.passed && said) {
            const says = said.trim().slice(0, 160)
            console.log(`  forgot "${omitted.name}": ${omitted.catchesOmission.kind} says ${says} (${result.took})`)
          } else {
            console.log(`  forgot "${omitted.name}": NOT CAUGHT (${result.took})`)
            failures.push(
              `forgetting "${omitted.name}" was not caught by ${omitted.catchesOmission.kind} with ` +
                `${omitted.says}:\n${result.output.slice(-3000)}`,
            )
          }
        })
      }
    }),
  )
} finally {
  await server.stop()
}

if (failures.length) {
  console.error(failures.join('\n\n'))
  process.exit(1)
}
console.log(
  'check:template passed: the checklist builds withdrawals that pass every check, and each forgotten step is named',
)
