// `tsc` is TypeScript 7 when package.json installs it (docs/setup.md, "TypeScript"): two packages declare the
// command, and npm links the first by name; were that to change, every type-check would quietly take five times the
// CPU. A fork that removed the alias has TypeScript 5.9's tsc, which checks the same code: nothing to hold then.
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

const ROOT = new URL('../../', import.meta.url).pathname

it('when package.json installs TypeScript 7 beside 5.9, then the tsc that npm scripts run is TypeScript 7', async () => {
  const { devDependencies } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'))
  const native = devDependencies['@typescript/native'] as string | undefined
  if (!native) return
  expect(native).toMatch(/^npm:typescript@\^?7\./)
  const { stdout } = await promisify(execFile)(join(ROOT, 'node_modules/.bin/tsc'), ['--version'])
  expect(stdout).toMatch(/^Version 7\./)
})
